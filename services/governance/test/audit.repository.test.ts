import { createAuditRepository, governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(SQL_ENGINES)('audit repository on %s', (engine) => {
  let fixture: EngineFixture;
  let audit: ReturnType<typeof createAuditRepository>;
  const entry = (tenantId: string, action: string, resourceId: string) => ({
    tenantId,
    actor: 'alice',
    userId: 'alice',
    action,
    resourceType: 'run-score',
    resourceId,
    details: { runId: 'r-1', note: 'ü' },
  });

  beforeAll(async () => {
    fixture = await openEngine(engine);
    audit = createAuditRepository((await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations)).db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('appends entries and lists a tenant’s newest first, filtered and paged', async () => {
    const created = await audit.append(entry('t1', 'feedback.created', 's-1'));
    expect(created).toMatchObject({ id: expect.any(String), tenantId: 't1', details: { runId: 'r-1', note: 'ü' } });
    await audit.append(entry('t1', 'feedback.deleted', 's-1'));
    await audit.append(entry('t1', 'feedback.created', 's-2'));
    await audit.append(entry('t2', 'feedback.created', 's-9'));

    const all = await audit.list('t1', { skip: 0, take: 10 });
    expect(all).toHaveLength(3);
    expect(all.every((row) => row.tenantId === 't1')).toBe(true);
    const times = all.map((row) => row.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await audit.list('t1', { action: 'feedback.deleted', skip: 0, take: 10 })).map((row) => row.resourceId)).toEqual(['s-1']);
    expect((await audit.list('t1', { resourceId: 's-1', skip: 0, take: 10 })).map((row) => row.action).sort()).toEqual([
      'feedback.created',
      'feedback.deleted',
    ]);
    expect(await audit.list('t1', { skip: 1, take: 1 })).toEqual([all[1]]);
    expect(await audit.list('t3', { skip: 0, take: 10 })).toEqual([]);
  });
});

import { createSessionRepository, sessionMigrations, type SessionDatabase, type SessionRepository } from '@hangar/session';
import type { Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture, sealingCipher } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(SQL_ENGINES)('session repository on %s', (engine) => {
  let fixture: EngineFixture;
  let repository: SessionRepository;
  let db: Kysely<SessionDatabase>;
  const create = (tenantId: string, id: string, ownerId: string | null = null, agentName: string | null = 'bot') =>
    repository.create(tenantId, { id, agentName, ownerId, stateMafVersion: 'hangar/test' });

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<SessionDatabase>('sessions', sessionMigrations)).db;
    repository = createSessionRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates a session once with the envelope defaults', async () => {
    const session = await create('t1', 's-1', 'alice');
    expect(session).toMatchObject({
      id: 's-1',
      tenantId: 't1',
      ownerId: 'alice',
      agentName: 'bot',
      version: 1,
      stateSchemaVersion: 1,
      stateMafVersion: 'hangar/test',
      messageCount: 0,
    });
    expect(await create('t1', 's-1', 'bob')).toBeUndefined();
    expect((await repository.get('t1', 's-1'))?.ownerId).toBe('alice');
  });

  it('appends messages with consecutive sequences, keeps content JSON as written, and replaces state', async () => {
    await repository.append('t1', 's-1', [{ role: 'user', content: 'hello', runId: 'r1' }], undefined);
    await repository.append(
      't1',
      's-1',
      [
        { role: 'assistant', content: [{ type: 'text', text: 'hi' }], runId: 'r1' },
        { role: 'user', content: { note: 'structured' }, runId: null },
      ],
      { value: { turn: 2 }, mafVersion: 'hangar/next' },
    );
    const detail = await repository.detail('t1', 's-1');
    expect(detail?.messages.map((message) => [message.sequence, message.role, message.content, message.runId])).toEqual([
      [0, 'user', 'hello', 'r1'],
      [1, 'assistant', [{ type: 'text', text: 'hi' }], 'r1'],
      [2, 'user', { note: 'structured' }, null],
    ]);
    expect(detail?.state).toEqual({ turn: 2 });
    expect(detail?.session).toMatchObject({ messageCount: 3, stateMafVersion: 'hangar/next' });
  });

  it('allocates distinct sequences to concurrent appends', async () => {
    await create('t1', 's-busy');
    await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        repository.append('t1', 's-busy', [{ role: 'user', content: `m${index}`, runId: null }], undefined),
      ),
    );
    const detail = await repository.detail('t1', 's-busy');
    expect(detail?.messages.map((message) => message.sequence)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(detail?.session.messageCount).toBe(6);
  });

  it('does not append to an unknown session', async () => {
    expect(await repository.append('t1', 'nope', [{ role: 'user', content: 'x', runId: null }], undefined)).toBeUndefined();
  });

  it('branches: copies messages up to the sequence into a new session with the source owner', async () => {
    const source = (await repository.get('t1', 's-1'))!;
    expect(await repository.branch('t1', source, 1, 's-1-branch')).toBe(2);
    const branch = await repository.detail('t1', 's-1-branch');
    expect(branch?.session).toMatchObject({ ownerId: 'alice', parentSessionId: 's-1', messageCount: 2, agentName: 'bot' });
    expect(branch?.messages.map((message) => message.content)).toEqual(['hello', [{ type: 'text', text: 'hi' }]]);
    await repository.append('t1', 's-1-branch', [{ role: 'user', content: 'only in branch', runId: null }], undefined);
    expect((await repository.detail('t1', 's-1'))?.messages).toHaveLength(3);
    expect(await repository.branch('t1', source, 0, 's-1-branch')).toBeUndefined();
  });

  it('creates a session with metadata and first messages in one step, replaces the metadata, and branches keep it', async () => {
    const created = await repository.create('t-conv', {
      id: 'conv_1',
      agentName: null,
      ownerId: 'carol',
      stateMafVersion: 'hangar/test',
      metadata: { topic: 'billing' },
      messages: [
        { role: 'system', content: 'be brief', runId: null },
        { role: 'user', content: 'hello', runId: null },
      ],
    });
    expect(created).toMatchObject({ id: 'conv_1', agentName: null, messageCount: 2, metadata: { topic: 'billing' } });
    expect((await repository.detail('t-conv', 'conv_1'))?.messages.map((message) => [message.sequence, message.content])).toEqual([
      [0, 'be brief'],
      [1, 'hello'],
    ]);
    // A taken id writes nothing: neither the row nor its messages.
    expect(
      await repository.create('t-conv', {
        id: 'conv_1',
        agentName: null,
        ownerId: null,
        stateMafVersion: 'x',
        messages: [{ role: 'user', content: 'again', runId: null }],
      }),
    ).toBeUndefined();
    expect((await repository.get('t-conv', 'conv_1'))?.messageCount).toBe(2);

    expect((await repository.updateMetadata('t-conv', 'conv_1', { topic: 'refunds', lang: 'en' }))?.metadata).toEqual({
      topic: 'refunds',
      lang: 'en',
    });
    expect(await repository.updateMetadata('t-other', 'conv_1', {})).toBeUndefined();
    await repository.branch('t-conv', (await repository.get('t-conv', 'conv_1'))!, 0, 'conv_1b');
    expect((await repository.get('t-conv', 'conv_1b'))?.metadata).toEqual({ topic: 'refunds', lang: 'en' });
  });

  it('lists newest update first, narrowed by agent and owner, paged', async () => {
    await create('t1', 's-carol', 'carol', 'other-bot');
    await create('t1', 's-none', null, 'bot');
    const all = await repository.list('t1', { skip: 0, take: 50 });
    expect(all.map((session) => session.id)).toEqual(expect.arrayContaining(['s-1', 's-busy', 's-1-branch', 's-carol', 's-none']));
    // Newest update first. (updatedAt has millisecond precision; PostgreSQL orders by microseconds,
    // so two sessions within one millisecond may come in either order here.)
    const times = all.map((session) => Date.parse(session.updatedAt));
    expect(times.every((time, index) => index === 0 || times[index - 1] >= time)).toBe(true);
    expect(Date.parse(all[0].updatedAt)).toBeGreaterThanOrEqual(Date.parse(all.find((session) => session.id === 's-1')!.updatedAt));
    expect((await repository.list('t1', { agentName: 'other-bot', skip: 0, take: 50 })).map((session) => session.id)).toEqual(['s-carol']);
    expect((await repository.list('t1', { ownerId: 'alice', skip: 0, take: 50 })).map((session) => session.id).sort()).toEqual([
      's-1',
      's-1-branch',
    ]);
    expect(await repository.list('t1', { skip: 1, take: 2 })).toEqual(all.slice(1, 3));
    expect(await repository.list('t2', { skip: 0, take: 50 })).toEqual([]);
  });

  it('deletes a session with its messages, once', async () => {
    expect(await repository.delete('t1', 's-busy')).toBe(true);
    expect(await repository.detail('t1', 's-busy')).toBeUndefined();
    expect(await repository.delete('t1', 's-busy')).toBe(false);
    expect((await create('t1', 's-busy'))?.messageCount).toBe(0);
    expect((await repository.detail('t1', 's-busy'))?.messages).toEqual([]);
  });

  it('keeps tenants apart: the same id in two tenants', async () => {
    expect(await create('t2', 's-1', 'zed')).toBeDefined();
    expect((await repository.get('t2', 's-1'))?.ownerId).toBe('zed');
    expect((await repository.get('t1', 's-1'))?.ownerId).toBe('alice');
  });

  it('seals messages and state when content protection is on: no plaintext in the rows, the same values read back, branches too', async () => {
    const cipher = sealingCipher();
    const sealed = createSessionRepository(db, cipher);
    await sealed.create('t9', { id: 'sealed', agentName: 'bot', ownerId: null, stateMafVersion: 'hangar/test' });
    const appended = await sealed.append('t9', 'sealed', [{ role: 'user', content: { text: 'canary-6a1' }, runId: null }], {
      value: { note: 'canary-6a1' },
      mafVersion: 'hangar/test',
    });
    expect(appended?.[0].content).toEqual({ text: 'canary-6a1' });
    const stored = JSON.stringify([
      await db.selectFrom('sessions').select('state').where('tenant_id', '=', 't9').execute(),
      await db.selectFrom('session_messages').select('content').where('tenant_id', '=', 't9').execute(),
    ]);
    expect(stored).toContain('hgc1.k1.');
    expect(stored).not.toContain('canary');
    const detail = await sealed.detail('t9', 'sealed');
    expect([detail?.state, detail?.messages[0].content]).toEqual([{ note: 'canary-6a1' }, { text: 'canary-6a1' }]);
    await sealed.branch('t9', detail!.session, 0, 'sealed-branch');
    expect((await sealed.detail('t9', 'sealed-branch'))?.messages[0].content).toEqual({ text: 'canary-6a1' });
    // Without the key the rows do not open: an error, never the sealed text as if it were content.
    await expect(repository.detail('t9', 'sealed')).rejects.toThrow(/key "k1" cannot be read/);
  });
});

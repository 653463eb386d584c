import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { sql, type Kysely } from '@hangar/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDatabase } from '../src/database.js';
import { queuedRun } from '../src/jobs/queued-runs.service.js';
import { runMigrations } from '../src/migrations/index.js';
import type { Firing, ScheduleInput } from '../src/schedules/schedule.model.js';
import { createScheduleRepository } from '../src/schedules/schedule.repository.js';

/** Schedules on both engines: one firing per (schedule, fire time) however many instances try, and the scheduler lease. */
describe.each(SQL_ENGINES)('schedule repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<RunDatabase>;
  let schedules: ReturnType<typeof createScheduleRepository>;
  const caller = { tenantId: 't1', actor: 'auth-token', role: 'Operator' };
  const planned = new Date('2030-01-01T10:00:00.000Z');

  const input = (overrides: Partial<ScheduleInput> = {}): ScheduleInput => ({
    name: 'nightly',
    handlerKey: 'agent-run',
    cron: '0 * * * *',
    timeZone: 'UTC',
    payload: { agentName: 'bot', message: 'hello' },
    enabled: true,
    savedBy: caller,
    nextFireAt: planned,
    ...overrides,
  });
  const firing = (fireAt: Date, nextFireAt: Date | null = new Date(fireAt.getTime() + 3_600_000)): Firing => ({
    fireAt,
    nextFireAt,
    run: queuedRun(caller, { agentName: 'bot', agentVersion: null, sessionId: null, kind: 'Scheduled', labels: {} }),
    job: { payload: { n: 1 }, lane: 'default', maxAttempts: 3 },
  });
  const scheduledRuns = () => db.selectFrom('runs').select(['id', 'kind', 'status']).where('kind', '=', 'Scheduled').execute();
  const firingRows = (scheduleId: string) =>
    db.selectFrom('schedule_firings').select(['fire_at', 'run_id']).where('schedule_id', '=', scheduleId).execute();

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<RunDatabase>('runs', runMigrations)).db;
    schedules = createScheduleRepository(db);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('creates, replaces (keeping what firings left) and deletes per tenant', async () => {
    const { schedule, created } = await schedules.put('t1', input({ name: 'kept' }));
    expect(created).toBe(true);
    await schedules.fire(schedule, planned, firing(planned));
    const replaced = await schedules.put('t1', input({ name: 'kept', cron: '*/5 * * * *', enabled: false, nextFireAt: null }));
    expect(replaced.created).toBe(false);
    expect(replaced.schedule).toMatchObject({
      id: schedule.id,
      cron: '*/5 * * * *',
      enabled: false,
      nextFireAt: null,
      lastFireAt: planned,
    });
    expect(await schedules.get('t2', 'kept')).toBeUndefined();
    expect(await schedules.delete('t2', 'kept')).toBe(false);
    expect(await schedules.delete('t1', 'kept')).toBe(true);
    expect(await schedules.get('t1', 'kept')).toBeUndefined();
  });

  it('fires a fire time once when two instances fire it at the same moment', async () => {
    const { schedule } = await schedules.put('t1', input({ name: 'raced' }));
    const before = (await scheduledRuns()).length;
    const outcomes = await Promise.all([
      schedules.fire(schedule, planned, firing(planned)),
      schedules.fire(schedule, planned, firing(planned)),
    ]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect((await scheduledRuns()).length).toBe(before + 1);
    const [recorded] = await firingRows(schedule.id);
    expect((await firingRows(schedule.id)).length).toBe(1);
    expect(recorded.fire_at).toEqual(planned);
    const stored = await schedules.get('t1', 'raced');
    expect(stored).toMatchObject({ lastFireAt: planned, lastRunId: recorded.run_id, nextFireAt: new Date('2030-01-01T11:00:00.000Z') });
    expect(await db.selectFrom('jobs').select(['status', 'max_attempts']).where('run_id', '=', recorded.run_id).executeTakeFirst()).toEqual(
      {
        status: 'queued',
        max_attempts: 3,
      },
    );
  });

  it('refuses a fire time fired before (a stale plan), only moving the plan on; the key holds without the plan check', async () => {
    const { schedule } = await schedules.put('t1', input({ name: 'stale' }));
    expect(await schedules.fire(schedule, planned, firing(planned))).toBe(true);
    // An instance that read the schedule before the firing still holds the old plan.
    expect(await schedules.fire(schedule, planned, firing(planned))).toBe(false);
    // Planned again for the same time (as if the plan were lost): the firing key refuses it.
    await db.updateTable('schedules').set({ next_fire_at: planned }).where('id', '=', schedule.id).execute();
    const before = (await scheduledRuns()).length;
    expect(await schedules.fire(schedule, planned, firing(planned))).toBe(false);
    expect((await scheduledRuns()).length).toBe(before);
    expect((await firingRows(schedule.id)).length).toBe(1);
    expect((await schedules.get('t1', 'stale'))!.nextFireAt).toEqual(new Date('2030-01-01T11:00:00.000Z'));
    await expect(
      db
        .insertInto('schedule_firings')
        .values({ schedule_id: schedule.id, fire_at: planned, run_id: (await firingRows(schedule.id))[0].run_id })
        .execute(),
    ).rejects.toThrow();
  });

  it('lists due schedules, the most overdue first, and the soonest fire time of enabled ones', async () => {
    await db.deleteFrom('schedules').execute();
    await schedules.put('t1', input({ name: 'later', nextFireAt: new Date('2030-01-01T09:30:00.000Z') }));
    await schedules.put('t2', input({ name: 'earlier', nextFireAt: new Date('2030-01-01T09:00:00.000Z') }));
    await schedules.put('t1', input({ name: 'future', nextFireAt: new Date('2030-01-01T12:00:00.000Z') }));
    await schedules.put('t1', input({ name: 'off', enabled: false, nextFireAt: null }));
    expect((await schedules.due(planned, 10)).map((schedule) => schedule.name)).toEqual(['earlier', 'later']);
    expect((await schedules.due(planned, 1)).map((schedule) => schedule.name)).toEqual(['earlier']);
    expect(await schedules.soonest()).toEqual(new Date('2030-01-01T09:00:00.000Z'));
  });

  it('lets one scheduler hold the lease; another takes it over once it runs out or is released', async () => {
    expect(await schedules.takeLease('a', 60_000)).toBe(true);
    expect(await schedules.takeLease('b', 60_000)).toBe(false);
    expect(await schedules.takeLease('a', 60_000)).toBe(true);
    await db
      .updateTable('scheduler_lease')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .execute();
    expect(await schedules.takeLease('b', 60_000)).toBe(true);
    expect(await schedules.takeLease('a', 60_000)).toBe(false);
    await schedules.releaseLease('a');
    expect(await schedules.takeLease('a', 60_000)).toBe(false);
    await schedules.releaseLease('b');
    expect(await schedules.takeLease('a', 60_000)).toBe(true);
  });
});

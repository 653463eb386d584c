import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { dropSchemas, eventually, startHangar, TEST_REDIS_URL, uniqueSchemaPrefix, type HangarUnderTest } from '@hangar/testing';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunDatabase } from '../services/run-executor/src/database.js';
import { runMigrations } from '../services/run-executor/src/migrations/index.js';

/**
 * Schedules across a fleet: two all-in-one instances on one PostgreSQL schema and one Redis, each
 * with its scheduler and job worker, as two replicas would run.
 */

const MINUTE = 60_000;
const started: HangarUnderTest[] = [];
const schemaPrefixes: string[] = [];

async function startPair(overrides: (index: number) => Record<string, unknown> = () => ({})) {
  const shared = {
    Redis: { ConnectionString: TEST_REDIS_URL, ChannelPrefix: `t_${randomBytes(5).toString('hex')}:` },
    Scheduling: { PollInterval: '2s' },
  };
  // Given by the test, so that stopping either instance leaves the schemas to the other (dropped at the end).
  const schemaPrefix = uniqueSchemaPrefix();
  schemaPrefixes.push(schemaPrefix);
  const start = (index: number) =>
    startHangar({ engine: 'postgres', modules: allInOneModules(), schemaPrefix, overrides: { ...shared, ...overrides(index) } });
  const first = await start(0);
  started.push(first);
  const second = await start(1);
  started.push(second);
  const created = await first.request('POST', '/api/agents', { body: { name: 'ticker', model: { provider: 'demo', model: 'echo' } } });
  expect(created.status, created.text).toBe(201);
  return [first, second] as const;
}

const putEveryMinute = (on: HangarUnderTest, name: string, enabled = true) =>
  on.request('PUT', `/api/schedules/${name}`, {
    body: { handlerKey: 'agent-run', cron: '* * * * *', payload: { agentName: 'ticker', message: 'tick' }, enabled },
  });
const scheduledRuns = async (on: HangarUnderTest, name: string) =>
  (await on.request('GET', `/api/runs?kind=Scheduled&label=schedule:${name}&take=100`)).body as any[];
const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
/** The minute boundaries in (from, to]. */
const boundaries = (from: number, to: number) => {
  const marks = [];
  for (let mark = Math.floor(from / MINUTE) * MINUTE + MINUTE; mark <= to; mark += MINUTE) marks.push(new Date(mark).toISOString());
  return marks;
};

afterAll(async () => {
  for (const instance of started.reverse()) await instance.stop();
  for (const prefix of schemaPrefixes) await dropSchemas(prefix);
});

describe('schedules on two instances', () => {
  it(
    'a schedule fires exactly once per minute with two instances running for two minutes',
    async () => {
      const [first, second] = await startPair();
      const savedAt = Date.now();
      expect((await putEveryMinute(first, 'every-minute')).status).toBe(201);
      // Two minutes (a CI worker waits them out); a boundary right at the end is waited for (or left out) so that no
      // firing is in flight when checked.
      let endAt = savedAt + 2 * MINUTE;
      if (endAt % MINUTE < 5000) endAt += 5000 - (endAt % MINUTE);
      else if (MINUTE - (endAt % MINUTE) < 3000) endAt += MINUTE - (endAt % MINUTE) + 5000;
      await sleepUntil(endAt);
      expect((await putEveryMinute(second, 'every-minute', false)).status).toBe(200);
      const expected = boundaries(savedAt, endAt);
      expect(expected.length).toBeGreaterThanOrEqual(2);

      const runs = await scheduledRuns(second, 'every-minute');
      const fireTimes = runs.map((run) => run.labels.scheduleFireAt).sort();
      expect(fireTimes).toEqual(expected);
      const { db } = await first.openStore<RunDatabase>('runs', runMigrations);
      const firings = await db.selectFrom('schedule_firings').select(['fire_at', 'run_id']).orderBy('fire_at').execute();
      expect(firings.map((firing) => firing.fire_at.toISOString())).toEqual(expected);
      expect(new Set(firings.map((firing) => firing.run_id))).toEqual(new Set(runs.map((run) => run.id)));
      // Each was executed by one of the workers.
      for (const run of runs) {
        await eventually(async () => {
          const found = (await first.request('GET', `/api/runs/${run.id}`)).body;
          return found.status === 'Completed' ? found : undefined;
        }, `scheduled run ${run.id} to complete`);
      }
      const stored = (await first.request('GET', '/api/schedules/every-minute')).body;
      expect(stored).toMatchObject({ enabled: false, nextFireAt: null, lastFireAt: expected.at(-1) });
    },
    5 * MINUTE,
  );

  it(
    'with SingletonExecution only the lease holder fires; the other takes over once it stops',
    async () => {
      const [first, second] = await startPair((index) => ({
        Scheduling: { PollInterval: '200ms' },
        SingletonExecution: { Enabled: true, LeaseDuration: '3s', OwnerId: index === 0 ? 'first' : 'second' },
      }));
      const { db } = await second.openStore<RunDatabase>('runs', runMigrations);
      const holder = () => db.selectFrom('scheduler_lease').select('owner').executeTakeFirstOrThrow();
      expect((await holder()).owner).toBe('first');
      const overdue = (name: string) =>
        db
          .updateTable('schedules')
          .set({ next_fire_at: new Date(Date.now() - 2 * MINUTE) })
          .where('name', '=', name)
          .execute();

      expect((await putEveryMinute(second, 'held')).status).toBe(201);
      await overdue('held');
      await eventually(async () => ((await scheduledRuns(second, 'held')).length === 1 ? true : undefined), 'the holder to fire');

      await first.stop();
      started.splice(started.indexOf(first), 1);
      await eventually(async () => ((await holder()).owner === 'second' ? true : undefined), 'the lease to pass to second');
      // Another schedule: 'held' fired the latest minute already, and a fire time fires once.
      expect((await putEveryMinute(second, 'taken-over')).status).toBe(201);
      await overdue('taken-over');
      await eventually(async () => ((await scheduledRuns(second, 'taken-over')).length === 1 ? true : undefined), 'second to fire');
    },
    2 * MINUTE,
  );
});

import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, type HangarUnderTest } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDatabase } from '../services/run-executor/src/database.js';
import { runMigrations } from '../services/run-executor/src/migrations/index.js';

/** API.md "Schedules" on all-in-one: the routes, their refusals, tenant isolation, firing and what switches it off. */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
const common = { Tenancy: { Enabled: true, AllowHeaderResolution: true }, Scheduling: { PollInterval: '200ms' } };
let hangar: HangarUnderTest;

const schedule = (overrides: Record<string, unknown> = {}) => ({
  handlerKey: 'agent-run',
  cron: '0 9 * * 1-5',
  timeZone: 'Europe/Berlin',
  payload: { agentName: 'echoer', message: 'good morning' },
  ...overrides,
});
const put = (name: string, body: unknown, on = hangar, headers = acme) => on.request('PUT', `/api/schedules/${name}`, { body, headers });
const scheduledRuns = async (name: string, on = hangar) =>
  (await on.request('GET', `/api/runs?kind=Scheduled&label=schedule:${name}`, { headers: acme })).body as any[];
const minute = (at: number) => new Date(Math.floor(at / 60_000) * 60_000).toISOString();

/** Plans the schedule's next fire time three minutes back, as if every instance had been down since. */
async function overdue(on: HangarUnderTest, name: string) {
  const { db } = await on.openStore<RunDatabase>('runs', runMigrations);
  await db
    .updateTable('schedules')
    .set({ next_fire_at: new Date(minute(Date.now() - 180_000)) })
    .where('name', '=', name)
    .execute();
}

async function startWithAgent(overrides: Record<string, unknown> = {}) {
  const started = await startHangar({ modules: allInOneModules(), overrides: { ...common, ...overrides } });
  const created = await started.request('POST', '/api/agents', {
    body: { name: 'echoer', model: { provider: 'demo', model: 'echo' } },
    headers: acme,
  });
  expect(created.status, created.text).toBe(201);
  return started;
}

beforeAll(async () => {
  hangar = await startWithAgent();
});

afterAll(async () => {
  await hangar?.stop();
});

describe('schedule routes', () => {
  it('creates (201), replaces (200), reads, lists and deletes (204) a schedule, auditing each change', async () => {
    const created = await put('mornings', schedule());
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'mornings',
      handlerKey: 'agent-run',
      cron: '0 9 * * 1-5',
      timeZone: 'Europe/Berlin',
      payload: { agentName: 'echoer', message: 'good morning' },
      enabled: true,
      lastFireAt: null,
      lastRunId: null,
    });
    // 09:00 in Berlin is 07:00 or 08:00 UTC, on a weekday, after now.
    const next = new Date(created.body.nextFireAt);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect([7, 8]).toContain(next.getUTCHours());
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());

    const replaced = await put('mornings', schedule({ cron: '30 18 * * *', timeZone: undefined, enabled: false }));
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ cron: '30 18 * * *', timeZone: 'UTC', enabled: false, nextFireAt: null });
    expect(replaced.body.createdAt).toBe(created.body.createdAt);

    expect((await hangar.request('GET', '/api/schedules/mornings', { headers: acme })).body).toEqual(replaced.body);
    expect((await hangar.request('GET', '/api/schedules', { headers: acme })).body.map((item: any) => item.name)).toContain('mornings');
    expect((await hangar.request('DELETE', '/api/schedules/mornings', { headers: acme })).status).toBe(204);
    expectProblem(await hangar.request('GET', '/api/schedules/mornings', { headers: acme }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/schedules/mornings', { headers: acme }), 404, 'not_found');

    const audit = (await hangar.request('GET', '/api/audit?resourceType=schedule', { headers: acme })).body as any[];
    expect(audit.map((entry) => entry.action).sort()).toEqual(['schedule.created', 'schedule.deleted', 'schedule.updated']);
  });

  it('answers 400 naming each mistake and stores nothing', async () => {
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ handlerKey: 'report' }, 'handlerKey'],
      [{ cron: 'every day' }, 'cron'],
      [{ cron: '0 0 9 * * *' }, 'cron'],
      [{ cron: '61 * * * *' }, 'cron'],
      [{ timeZone: 'Mars/Olympus_Mons' }, 'timeZone'],
      [{ payload: { agentName: 'echoer' } }, 'payload.message'],
      [{ payload: { agentName: 'echoer', message: 'hi', model: 'x' } }, 'payload'],
      [{ payload: { agentName: 'nobody', message: 'hi' } }, 'payload.agentName'],
    ];
    for (const [overrides, path] of refusals) {
      const refused = await put('refused', schedule(overrides));
      expectProblem(refused, 400, 'validation_failed');
      expect(
        refused.body.errors.map((error: any) => error.path),
        JSON.stringify(overrides),
      ).toContain(path);
    }
    expectProblem(await put('bad name!', schedule()), 400, 'validation_failed');
    expectProblem(await hangar.request('GET', '/api/schedules/refused', { headers: acme }), 404, 'not_found');
  });

  it('keeps each tenant’s schedules to itself', async () => {
    expect((await put('private', schedule())).status).toBe(201);
    expectProblem(await hangar.request('GET', '/api/schedules/private', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('POST', '/api/schedules/private/trigger', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/schedules/private', { headers: globex }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/schedules', { headers: globex })).body).toEqual([]);
    expect((await hangar.request('GET', '/api/schedules/private', { headers: acme })).status).toBe(200);
  });

  it('triggers a run now: 202 { runId } with Location, a Scheduled run that completes and becomes lastRunId', async () => {
    expect((await put('on-demand', schedule({ enabled: false }))).status).toBe(201);
    const triggered = await hangar.request('POST', '/api/schedules/on-demand/trigger', { headers: acme });
    expect(triggered.status, triggered.text).toBe(202);
    const { runId } = triggered.body;
    expect(triggered.headers.get('location')).toBe(`/api/runs/${runId}`);
    const run = await eventually(async () => {
      const found = (await hangar.request('GET', `/api/runs/${runId}`, { headers: acme })).body;
      return found.status === 'Completed' ? found : undefined;
    }, 'the triggered run to complete');
    expect(run).toMatchObject({ kind: 'Scheduled', agentName: 'echoer', labels: { schedule: 'on-demand' } });
    expect((await hangar.request('GET', '/api/schedules/on-demand', { headers: acme })).body).toMatchObject({
      lastRunId: runId,
      lastFireAt: null,
    });
  });

  it('fires an overdue schedule once, for the latest missed fire time, and plans the next', async () => {
    // A minute turning before the checks would fire it again, on time: start with 20 s of the minute left.
    const msLeft = 60_000 - (Date.now() % 60_000);
    if (msLeft < 20_000) await new Promise((resolve) => setTimeout(resolve, msLeft + 100));
    expect((await put('every-minute', schedule({ cron: '* * * * *', timeZone: 'Asia/Kolkata' }))).status).toBe(201);
    const before = Date.now();
    await overdue(hangar, 'every-minute');
    const [run] = await eventually(async () => {
      const runs = await scheduledRuns('every-minute');
      return runs.length ? runs : undefined;
    }, 'the overdue firing');
    expect([minute(before), minute(Date.now())]).toContain(run.labels.scheduleFireAt);
    const stored = (await hangar.request('GET', '/api/schedules/every-minute', { headers: acme })).body;
    expect(stored).toMatchObject({ lastRunId: run.id, lastFireAt: run.labels.scheduleFireAt });
    expect(new Date(stored.nextFireAt).getTime()).toBeGreaterThan(before);
    await eventually(async () => {
      const found = (await hangar.request('GET', `/api/runs/${run.id}`, { headers: acme })).body;
      return found.status === 'Completed' ? found : undefined;
    }, 'the fired run to complete');
    expect(await scheduledRuns('every-minute')).toHaveLength(1);
    await hangar.request('DELETE', '/api/schedules/every-minute', { headers: acme });
  }, 60_000);
});

describe.each([
  ['Scheduling:Enabled', { Enabled: false }],
  ['Scheduling:RunWorker', { RunWorker: false }],
])('with %s false', (_key, scheduling) => {
  it('fires nothing', async () => {
    const off = await startWithAgent({ Scheduling: { PollInterval: '200ms', ...scheduling } });
    try {
      expect((await put('idle', schedule({ cron: '* * * * *' }), off)).status).toBe(201);
      await overdue(off, 'idle');
      // Ten poll intervals of a scheduler that would be running.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(await scheduledRuns('idle', off)).toEqual([]);
      expect((await off.request('GET', '/api/schedules/idle', { headers: acme })).body.lastFireAt).toBeNull();
    } finally {
      await off.stop();
    }
  }, 60_000);
});

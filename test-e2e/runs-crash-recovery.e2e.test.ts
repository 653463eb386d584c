import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  parseSseFrames,
  spawnAllInOne,
  startHangar,
  startMockOpenAI,
  TEST_POSTGRES_URL,
  TEST_TOKEN,
  type AllInOneProcess,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Recovery across real process deaths: Hangar processes on one PostgreSQL are SIGKILLed while
 * they execute runs, and another process takes over their job leases, or restarts or closes
 * their interactive runs (RunContinuation).
 */

let mock: MockOpenAI;
let observer: HangarUnderTest;
const spawned: AllInOneProcess[] = [];

const RECONCILING = {
  HANGAR__RunReconciliation__Enabled: 'true',
  HANGAR__RunReconciliation__HeartbeatInterval: '200ms',
  HANGAR__RunReconciliation__OrphanThreshold: '1s',
  HANGAR__RunReconciliation__ScanInterval: '250ms',
  HANGAR__RunContinuation__Enabled: 'true',
  HANGAR__RunContinuation__MaxAttempts: '1',
};

/** A Hangar process on the observer's schemas, talking to the mock upstream. */
async function spawnOnSharedStore(env: Record<string, string> = {}) {
  const process = await spawnAllInOne({
    env: {
      HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL,
      HANGAR__Stores__Postgres__SchemaName: observer.config.Stores.Postgres.SchemaName,
      HANGAR__Providers__mock__Kind: 'OpenAICompatible',
      HANGAR__Providers__mock__Endpoint: mock.url,
      ...env,
    },
  });
  spawned.push(process);
  return process;
}

/** Starts a streamed run on `target` and returns its id once the run row exists. */
async function startRun(target: AllInOneProcess, agentName: string) {
  const response = await fetch(`${target.url}/api/agents/${agentName}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: `please, ${agentName}` }),
  });
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  // The stream dies with its process; nothing more is read from it.
  reader.read().catch(() => {});
  return JSON.parse(/^data: (.*)$/m.exec(first)![1]).runId as string;
}

const runOf = async (runId: string) => (await observer.request('GET', `/api/runs/${runId}`)).body;
const eventsOf = async (runId: string) => {
  const response = await fetch(`${observer.url}/api/runs/${runId}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
  return parseSseFrames(await response.text());
};
/** The run's first stored event, read from its live stream (which stays open while the run goes on). */
const firstStoredEventOf = async (runId: string) => {
  const controller = new AbortController();
  const response = await fetch(`${observer.url}/api/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${TEST_TOKEN}` },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (parseSseFrames(text.slice(0, text.lastIndexOf('\n\n') + 1)).length === 0) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    controller.abort();
  }
  return parseSseFrames(text)[0];
};

beforeAll(async () => {
  mock = await startMockOpenAI();
  // The first call hangs (its process is killed meanwhile); the restarted run gets an answer.
  mock.script('crash-once', [{ delayMs: 30_000, then: { text: 'never seen' } }, { text: 'continued answer' }]);
  mock.script('always-hangs', [{ delayMs: 30_000, then: { text: 'never seen' } }]);
  mock.script('queued-crash-once', [{ delayMs: 30_000, then: { text: 'never seen' } }, { text: 'finished by the next worker' }]);
  observer = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    // The observer only reads: its own job worker must not race the processes under test for leases.
    overrides: { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } }, Scheduling: { RunWorker: false } },
  });
  for (const [name, model] of [
    ['fragile', 'crash-once'],
    ['doomed', 'always-hangs'],
    ['queued-fragile', 'queued-crash-once'],
  ]) {
    const created = await observer.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model } } });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await Promise.all(spawned.map((process) => process.kill()));
  await observer?.stop();
  await mock?.close();
});

describe('RunContinuation', () => {
  it('restarts runs whose process died, and closes one whose continuations ran out', async () => {
    const crashing = await spawnOnSharedStore(RECONCILING);
    const fragile = await startRun(crashing, 'fragile');
    const doomed = await startRun(crashing, 'doomed');
    await eventually(
      async () => (mock.callsTo('crash-once') && mock.callsTo('always-hangs') ? true : undefined),
      'both model calls',
      15_000,
    );
    // The first execution's run.started waits in the event batch window beside the model call
    // (decisions.md: a process killed in the window loses it); the kill comes once it is stored.
    for (const runId of [fragile, doomed]) expect((await firstStoredEventOf(runId))?.event).toBe('run.started');
    await crashing.kill();
    expect((await runOf(fragile)).status).toBe('Running');

    // A reconciling process restarts both (MaxAttempts 1): one completes, the other hangs again.
    const continuing = await spawnOnSharedStore(RECONCILING);
    const completed = await eventually(
      async () => {
        const run = await runOf(fragile);
        return run.status === 'Completed' ? run : undefined;
      },
      'the fragile run to complete',
      15_000,
    );
    expect(completed).toMatchObject({ kind: 'Interactive', errorType: null, rootRunId: fragile });
    expect(mock.callsTo('crash-once')).toBe(2);
    const fragileEvents = (await eventsOf(fragile)).map((event) => event.event);
    expect(fragileEvents.filter((event) => event === 'run.started')).toHaveLength(2);
    expect(fragileEvents).toContain('run.continued');
    expect(fragileEvents.at(-1)).toBe('run.completed');
    const continued = (await eventsOf(fragile)).find((event) => event.event === 'run.continued');
    expect(continued?.data.data).toEqual({ attempt: 1, reason: 'orphaned' });

    await eventually(async () => (mock.callsTo('always-hangs') === 2 ? true : undefined), 'the doomed run to be restarted', 15_000);
    await continuing.kill();

    // Its one continuation is spent: the next reconciling process closes it as orphaned.
    await spawnOnSharedStore(RECONCILING);
    const closed = await eventually(
      async () => {
        const run = await runOf(doomed);
        return run.status === 'Failed' ? run : undefined;
      },
      'the doomed run to be closed',
      15_000,
    );
    expect(closed.errorType).toBe('orphaned');
    const doomedEvents = await eventsOf(doomed);
    expect(doomedEvents.filter((event) => event.event === 'run.continued')).toHaveLength(1);
    expect(doomedEvents.at(-1)).toMatchObject({ event: 'run.failed', data: { data: { errorType: 'orphaned' } } });
    expect(mock.callsTo('always-hangs')).toBe(2);
  }, 90_000);
});

describe('job leases', () => {
  it('a worker killed while holding a lease: the next worker takes the expired lease over and completes the run', async () => {
    const LEASES = {
      HANGAR__Scheduling__LeaseDuration: '1s',
      HANGAR__Scheduling__PollInterval: '200ms',
      HANGAR__AsyncRun__MaxAttempts: '2',
    };
    const dying = await spawnOnSharedStore(LEASES);
    const accepted = await fetch(`${dying.url}/api/agents/queued-fragile/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ message: 'queued, then orphaned' }),
    });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    await eventually(
      async () => (mock.callsTo('queued-crash-once') === 1 ? true : undefined),
      'the first worker to call the model',
      15_000,
    );
    await dying.kill();
    expect((await runOf(runId)).status).toBe('Running');

    await spawnOnSharedStore(LEASES);
    const done = await eventually(
      async () => {
        const run = await runOf(runId);
        return run.status === 'Completed' ? run : undefined;
      },
      'the next worker to complete the run',
      // The window holds the second process's start, which a loaded 2-core machine can stretch.
      40_000,
    );
    expect(done).toMatchObject({ kind: 'Async', errorType: null });
    expect(mock.callsTo('queued-crash-once')).toBe(2);
    expect((await eventsOf(runId)).at(-1)?.event).toBe('run.completed');
  }, 90_000);
});

import {
  eventually,
  httpRequest,
  parseSseFrames,
  startDistributed,
  startPrivatePostgres,
  startPrivateRedis,
  TEST_TOKEN,
  type DistributedHangar,
  type PrivateEngine,
  type PrivatePostgres,
  type ProcessName,
  type SseFrame,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Engine faults on the split shape: every service its own process, two gateways each calling a run
 * executor of its own (both sharing the job queue), on a PostgreSQL and a redis-server of this test's
 * own, which it kills and restarts while HTTP traffic through both gateways (reads, agent writes,
 * streamed and queued runs) goes on. No process may exit, every refusal meanwhile is a 503
 * problem+json, the API answers again within 10 s of the engine's return on both gateways, every
 * acknowledged write is there afterwards, every acknowledged run ends exactly once, and no
 * submission answered with an error runs.
 */

let postgres: PrivatePostgres;
let redis: PrivateEngine;
let hangar: DistributedHangar;
const exited: ProcessName[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const api = (method: string, path: string, options: Parameters<typeof httpRequest>[3] = {}) =>
  httpRequest(hangar.url, method, path, { signal: AbortSignal.timeout(15_000), ...options });

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
  hangar = await startDistributed({
    postgresUrl: postgres.url,
    gateways: 2,
    runExecutors: 2,
    // Ten processes starting on two cores, beside another suite in CI: about 50 s alone.
    readyTimeoutMs: 150_000,
    env: {
      HANGAR__Redis__ConnectionString: redis.url,
      // `hangar <name> stopped` (with its unhandledRejections count) is an info line.
      HANGAR__Logging__Level: 'info',
      HANGAR__Stores__Postgres__CommandTimeoutSeconds: '5',
      HANGAR__Scheduling__PollInterval: '250ms',
      HANGAR__Scheduling__LeaseDuration: '3s',
      // A run whose ending could not be stored is closed by reconciliation, as in production.
      HANGAR__RunReconciliation__Enabled: 'true',
      HANGAR__RunReconciliation__HeartbeatInterval: '250ms',
      HANGAR__RunReconciliation__OrphanThreshold: '2s',
      HANGAR__RunReconciliation__ScanInterval: '500ms',
    },
  });
  for (const [name, exit] of hangar.exits) void exit.then(() => exited.push(name));
  for (const name of [...SCENARIOS.map((scenario) => scenario.agent), AFTER_OUTAGE]) {
    const created = await api('POST', '/api/agents', { body: { name, model: { provider: 'demo', model: 'echo' } } });
    expect(created.status, created.text).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await hangar?.cleanup();
  await Promise.all([postgres?.stop(), redis?.stop()]);
});

interface Refusal {
  request: string;
  status: number;
  contentType: string | null;
  body: string;
}

/** The gateway a request goes to: each in turn, so both gateways and both run executors see the outage. */
let turn = 0;
const nextGateway = () => hangar.urls[turn++ % hangar.urls.length];

interface SubmittedRun {
  runId: string;
  mode: 'streamed' | 'queued';
  /** For a streamed run, its SSE frames once the stream ended (undefined if it never did). */
  stream?: Promise<SseFrame[] | undefined>;
}

/** HTTP traffic through an outage: reads, agent writes and run submissions, recording every non-2xx answer. */
function startTraffic(agent: string) {
  const refusals: Refusal[] = [];
  const runs: SubmittedRun[] = [];
  /** Agents whose creation was answered 201. */
  const written: string[] = [];
  let submitted = 0;
  let going = true;
  const refuse = async (request: string, response: Response | undefined, failure?: unknown) =>
    refusals.push({
      request,
      status: response?.status ?? 0,
      contentType: response?.headers.get('content-type') ?? null,
      body: response ? await response.text().catch(() => '') : String(failure),
    });
  const send = async (request: string, init: RequestInit = {}) => {
    try {
      const response = await fetch(nextGateway() + request.slice(request.indexOf(' ') + 1), {
        method: request.slice(0, request.indexOf(' ')),
        ...init,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...init.headers },
        signal: AbortSignal.timeout(10_000),
      });
      if (response.status >= 300) await refuse(request, response);
      return response.status < 300 ? response : undefined;
    } catch (error) {
      await refuse(request, undefined, error);
      return undefined;
    }
  };
  const submitStreamed = async () => {
    const response = await send(`POST /api/agents/${agent}/run`, { body: JSON.stringify({ message: `streamed ${++submitted}` }) });
    if (!response) return;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const frames = () => parseSseFrames(text.slice(0, text.lastIndexOf('\n\n') + 2));
    const runFrame = () => frames().find((frame) => frame.event === 'run');
    let ended = false;
    try {
      while (!ended && !runFrame()) {
        const chunk = await reader.read();
        if (chunk.done) ended = true;
        else text += decoder.decode(chunk.value);
      }
    } catch {
      ended = true;
    }
    const runId: string | undefined = runFrame()?.data.runId;
    // A stream that ends before its run frame acknowledged nothing.
    if (!runId) {
      refusals.push({ request: `POST /api/agents/${agent}/run`, status: 200, contentType: 'text/event-stream', body: text });
      return;
    }
    const readRest = async () => {
      try {
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
        return parseSseFrames(text);
      } catch {
        return undefined; // cut off, or still open when the request timed out
      }
    };
    runs.push({ runId, mode: 'streamed', stream: ended ? Promise.resolve(frames()) : readRest() });
  };
  const submitQueued = async () => {
    const response = await send(`POST /api/agents/${agent}/run`, {
      body: JSON.stringify({ message: `queued ${++submitted}` }),
      headers: { prefer: 'respond-async' },
    });
    if (response) runs.push({ runId: ((await response.json()) as { runId: string }).runId, mode: 'queued' });
  };
  const writeAgent = async () => {
    const name = `${agent}-written-${++submitted}`;
    const response = await send('POST /api/agents', { body: JSON.stringify({ name, model: { provider: 'demo', model: 'echo' } }) });
    if (response?.status === 201) written.push(name);
  };
  // One loop per kind of request, so a request that hangs holds up only its own kind.
  const requests = [() => send('GET /api/agents'), () => send('GET /api/runs?take=5'), writeAgent, submitStreamed, submitQueued];
  const loops = requests.map(async (request) => {
    while (going) {
      await request();
      await sleep(100);
    }
  });
  return {
    refusals,
    runs,
    written,
    async stop() {
      going = false;
      await Promise.all(loops);
    },
  };
}

/** The agent of the runs made after an outage (each scenario's own agent has only the traffic's runs). */
const AFTER_OUTAGE = 'after-outage';

/** A streamed run through `url`, start to `done Completed`, once the engines are back (pub/sub included). */
const runCompletes = (url: string) =>
  eventually(
    async () => {
      const response = await fetch(`${url}/api/agents/${AFTER_OUTAGE}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'after the outage' }),
        signal: AbortSignal.timeout(8000),
      }).catch(() => undefined);
      const frames = response?.ok ? parseSseFrames(await response.text().catch(() => '')) : [];
      return frames.at(-1)?.event === 'done' && frames.at(-1)?.data.status === 'Completed' ? true : undefined;
    },
    `a streamed run through ${url} to complete after the outage`,
    25_000,
  );

/** Milliseconds until both reads answer 2xx again on every gateway. */
async function timeToRecover(): Promise<number> {
  const started = Date.now();
  const reads = hangar.urls.flatMap((url) => ['/api/agents', '/api/runs?take=5'].map((path) => [url, path] as const));
  await eventually(
    async () => {
      const answers = await Promise.all(
        reads.map(([url, path]) => httpRequest(url, 'GET', path, { signal: AbortSignal.timeout(15_000) }).catch(() => undefined)),
      );
      return answers.every((answer) => answer && answer.status < 300) ? true : undefined;
    },
    'the API to answer 2xx again',
    20_000,
  );
  return Date.now() - started;
}

interface Scenario {
  name: string;
  agent: string;
  /** Takes the engine away and brings it back; resolves once it is back. */
  outage(): Promise<void>;
  /** The engine is away long enough that some request must be refused (proof the outage was seen). */
  refusalsExpected: boolean;
}

/** An outage: the engine is SIGKILLed and started again `awayMs` later (engines exist once beforeAll ran). */
const killedFor = (engine: () => PrivateEngine, awayMs: number) => async () => {
  await engine().kill9();
  await sleep(awayMs);
  await engine().start();
};

const SCENARIOS: Scenario[] = [
  {
    name: 'PostgreSQL killed with -9, back after 3 s',
    agent: 'pg-killed',
    outage: killedFor(() => postgres, 3000),
    refusalsExpected: true,
  },
  {
    name: 'PostgreSQL fast restart (pg_ctl restart -m fast)',
    agent: 'pg-restarted',
    outage: () => postgres.restartFast(),
    refusalsExpected: false,
  },
  {
    name: 'redis-server killed with -9, back after 6 s',
    agent: 'redis-killed',
    outage: killedFor(() => redis, 6000),
    // Nothing needs refusing: pub/sub only wakes readers and workers early, the table is the truth.
    refusalsExpected: false,
  },
];

const observed = new Map<string, { refusals: Refusal[]; runs: SubmittedRun[]; written: string[] }>();
const isRead = (refusal: Refusal) => refusal.request.startsWith('GET ');
const notA503Problem = (refusal: Refusal) => refusal.status !== 503 || !refusal.contentType?.startsWith('application/problem+json');

const TERMINAL_STATUSES = ['Completed', 'Failed', 'Canceled'];
const TERMINAL_EVENTS = ['run.completed', 'run.failed', 'run.canceled'];

interface RunEnding {
  /** Why the run does not count as ended once: it never ends, or its stream ends twice or never. */
  trouble?: string;
  /** Terminal events in its event log (undefined when the store does not know the run). */
  terminalEvents?: number;
}

/**
 * How an acknowledged run ended after the outage. A streamed run the store does not know at all is
 * not a trouble: SPEC Errors 4 lets a run go on when its row cannot be written, and its stream is
 * then the only record of its one ending.
 */
async function runEnding(run: SubmittedRun, deadline: number): Promise<RunEnding> {
  if (run.stream) {
    const frames = await run.stream;
    const ends = frames?.filter((frame) => frame.event === 'done' || frame.event === 'error').length ?? 0;
    if (ends !== 1) return { trouble: `the stream of run ${run.runId} ${frames ? `carries ${ends} done/error frames` : 'never ended'}` };
  }
  let status: number | undefined;
  let runStatus: string | undefined;
  while (!TERMINAL_STATUSES.includes(runStatus!) && Date.now() < deadline) {
    const answer = await api('GET', `/api/runs/${run.runId}`);
    [status, runStatus] = [answer.status, answer.body?.status];
    // Its stream has ended, so its end has been recorded as far as it could be: a row not written by then never will be.
    if (status === 404 && run.stream) return {};
    if (!TERMINAL_STATUSES.includes(runStatus!)) await sleep(250);
  }
  if (!TERMINAL_STATUSES.includes(runStatus!)) return { trouble: `${run.mode} run ${run.runId} never ended (${status} ${runStatus})` };
  const events = await fetch(`${hangar.url}/api/runs/${run.runId}/events`, {
    headers: { authorization: `Bearer ${TEST_TOKEN}` },
    signal: AbortSignal.timeout(10_000),
  }).then(async (response) => parseSseFrames(await response.text()));
  return { terminalEvents: events.filter((event) => TERMINAL_EVENTS.includes(event.event)).length };
}

describe.each(SCENARIOS)('$name', (scenario) => {
  let endings: Map<string, RunEnding>;

  it('no process exits; reads refused meanwhile are 503 problem+json; 2xx again within 10 s of its return; runs again', async () => {
    const traffic = startTraffic(scenario.agent);
    await sleep(500);
    await scenario.outage();
    const recoveryMs = await timeToRecover();
    await sleep(500);
    await traffic.stop();
    observed.set(scenario.name, traffic);

    expect(exited).toEqual([]);
    expect(traffic.refusals.filter(isRead).filter(notA503Problem)).toEqual([]);
    expect(recoveryMs).toBeLessThan(10_000);
    if (scenario.refusalsExpected) expect(traffic.refusals.length).toBeGreaterThan(0);
    expect(traffic.runs.length).toBeGreaterThan(0);
    for (const url of hangar.urls) await runCompletes(url);
  }, 60_000);

  it('every agent whose creation was acknowledged is there, on both gateways', async () => {
    const { written } = observed.get(scenario.name)!;
    expect(written.length).toBeGreaterThan(0);
    const missing = [];
    for (const url of hangar.urls)
      for (const name of written) {
        const found = await httpRequest(url, 'GET', `/api/agents/${name}`, { signal: AbortSignal.timeout(15_000) });
        if (found.status !== 200) missing.push(`${url} ${name}: ${found.status}`);
      }
    expect(missing).toEqual([]);
  }, 30_000);

  it('every refused run submission is a 503 problem+json (none hangs)', () => {
    const { refusals } = observed.get(scenario.name)!;
    expect(refusals.filter((refusal) => !isRead(refusal)).filter(notA503Problem)).toEqual([]);
  });

  it('every acknowledged run ends once (terminal status, never two endings), and no refused submission runs', async () => {
    const { runs } = observed.get(scenario.name)!;
    const deadline = Date.now() + 15_000;
    endings = new Map(await Promise.all(runs.map(async (run) => [run.runId, await runEnding(run, deadline)] as const)));
    expect([...endings.values()].map((ending) => ending.trouble).filter(Boolean)).toEqual([]);
    expect(
      [...endings].filter(([, ending]) => ending.terminalEvents! > 1).map(([runId]) => runId),
      'runs ended twice',
    ).toEqual([]);
    const stored = (await api('GET', `/api/runs?agentName=${scenario.agent}&take=200`)).body as Array<{ id: string }>;
    const acknowledged = new Set(runs.map((run) => run.runId));
    expect(
      stored.filter((run) => !acknowledged.has(run.id)).map((run) => run.id),
      'runs of refused submissions',
    ).toEqual([]);
    expect(exited).toEqual([]);
  }, 60_000);

  it('the event log of every stored run that ended holds its terminal event', () => {
    const missing = [...endings].filter(([, ending]) => ending.terminalEvents === 0).map(([runId]) => runId);
    expect(missing).toEqual([]);
  });
});

describe('after the outages', () => {
  it('every process stops gracefully, having had no unhandled rejection', async () => {
    for (const child of hangar.processes.values()) child.kill('SIGTERM');
    const stopped = new Map<ProcessName, { code: number | null; unhandledRejections?: number }>();
    for (const [name, exit] of hangar.exits) {
      const code = await exit;
      const line = hangar
        .output(name)
        .split('\n')
        .findLast((candidate) => candidate.includes(' stopped"') && candidate.includes('"unhandledRejections"'));
      stopped.set(name, {
        code,
        unhandledRejections: line ? (JSON.parse(line) as { unhandledRejections: number }).unhandledRejections : undefined,
      });
    }
    expect(Object.fromEntries(stopped)).toEqual(
      Object.fromEntries([...stopped.keys()].map((name) => [name, { code: 0, unhandledRejections: 0 }])),
    );
  }, 30_000);
});

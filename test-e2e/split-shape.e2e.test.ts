import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { RUN_EVENTS_TOPIC } from '@hangar/contracts';
import { createKafkaEventLog, type EventLog } from '@hangar/messaging';
import {
  eventually,
  httpRequest,
  parseSseFrames,
  startDistributed,
  startMockOpenAI,
  TEST_KAFKA_BROKERS,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  TEST_TOKEN,
  type DistributedHangar,
  type MockOpenAI,
  type SseFrame,
} from '@hangar/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The split shape at its smallest: two gateways and two run executors (gateway A calls executor A,
 * B calls B, as `npm run start:distributed` wires them), every other service once, on PostgreSQL,
 * Redis and Kafka. A run executing on executor A is read live and canceled through gateway B; executor
 * A SIGKILLed amid 100 queued runs loses none of them, ends none twice, and neither loses nor
 * duplicates an event, in run_events or on Kafka.
 */

let mock: MockOpenAI;
let hangar: DistributedHangar;
let database: pg.Client;
let eventLog: EventLog;
/** Every run event record on Kafka, as consumers read them. */
const shipped: Array<{ key: string; event: RunEventEnvelope }> = [];
const topicPrefix = `t_${randomBytes(5).toString('hex')}.`;

interface RunEventEnvelope {
  runId: string;
  rootRunId: string;
  seq: number;
  type: string;
  data: unknown;
}

const [A, B] = [0, 1];
const TERMINAL_EVENTS = ['run.completed', 'run.failed', 'run.canceled'];
const TERMINAL_STATUSES = ['Completed', 'Failed', 'Canceled'];
/** Runs of `steady` take about a second each, so the kill finds some of them executing. */
const STEADY_ANSWER = 'one two three four five six seven eight nine ten';
const QUEUED_RUNS = 100;

const via = (gateway: number, method: string, path: string, options?: Parameters<typeof httpRequest>[3]) =>
  httpRequest(hangar.urls[gateway], method, path, { signal: AbortSignal.timeout(15_000), ...options });

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('talker', [{ text: 'the answer comes in twelve pieces so a reader can follow it live', chunkDelayMs: 100 }]);
  mock.script('hanging', [{ delayMs: 30_000, then: { text: 'never seen' } }]);
  mock.script('steady', [{ text: STEADY_ANSWER, chunkDelayMs: 100 }]);
  hangar = await startDistributed({
    gateways: 2,
    runExecutors: 2,
    // Ten processes starting on two cores, beside another suite in CI: about 50 s alone.
    readyTimeoutMs: 150_000,
    env: {
      HANGAR__Providers__mock__Kind: 'OpenAICompatible',
      HANGAR__Providers__mock__Endpoint: mock.url,
      HANGAR__Redis__ConnectionString: TEST_REDIS_URL,
      HANGAR__Redis__ChannelPrefix: `t_${randomBytes(5).toString('hex')}:`,
      HANGAR__Kafka__Brokers: TEST_KAFKA_BROKERS.join(','),
      HANGAR__Kafka__TopicPrefix: topicPrefix,
      // A dead executor's job leases run out within 2 s; the survivor polls every 250 ms.
      HANGAR__Scheduling__PollInterval: '250ms',
      HANGAR__Scheduling__LeaseDuration: '2s',
      HANGAR__Scheduling__MaxConcurrentJobs: '5',
      // A job leased a second time (its worker died) is executed again rather than abandoned.
      HANGAR__AsyncRun__MaxAttempts: '2',
      HANGAR__RunReconciliation__Enabled: 'true',
      HANGAR__RunReconciliation__HeartbeatInterval: '250ms',
      HANGAR__RunReconciliation__OrphanThreshold: '2s',
      HANGAR__RunReconciliation__ScanInterval: '500ms',
    },
  });
  database = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await database.connect();
  eventLog = await createKafkaEventLog({ brokers: TEST_KAFKA_BROKERS, clientId: 'split-shape-test', prefix: topicPrefix });
  await eventLog.subscribe(RUN_EVENTS_TOPIC, 'split-shape-test', async (record) => {
    shipped.push({ key: record.key, event: JSON.parse(record.value) as RunEventEnvelope });
  });
  for (const name of ['talker', 'hanging', 'steady']) {
    const created = await via(A, 'POST', '/api/agents', { body: { name, model: { provider: 'mock', model: name } } });
    expect(created.status, created.text).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await eventLog?.close();
  await database?.end();
  await hangar?.cleanup();
  await mock?.close();
});

type TimedFrame = SseFrame & { at: number };

/** `rows` by run, each run's in the order given. */
function byRun<T extends { run_id: string }>(rows: T[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>();
  for (const row of rows) grouped.set(row.run_id, [...(grouped.get(row.run_id) ?? []), row]);
  return grouped;
}

/** A server-sent event stream read as it arrives: its frames so far (each with its arrival time) and, once it ends, all of them. */
function readFrames(response: Response) {
  const frames: TimedFrame[] = [];
  const ended = (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffer += decoder.decode(chunk.value, { stream: true });
      const cut = buffer.lastIndexOf('\n\n');
      if (cut < 0) continue;
      const at = performance.now();
      for (const frame of parseSseFrames(buffer.slice(0, cut + 2))) frames.push({ ...frame, at });
      buffer = buffer.slice(cut + 2);
    }
    return frames;
  })();
  return { frames, ended };
}

const open = (gateway: number, method: string, path: string, body?: unknown) =>
  fetch(`${hangar.urls[gateway]}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });

/** A streamed run through `gateway`: its stream, once the run frame named it. */
async function startStreamedRun(gateway: number, agentName: string) {
  const response = await open(gateway, 'POST', `/api/agents/${agentName}/run`, { message: `hello ${agentName}` });
  expect(response.status).toBe(200);
  const stream = readFrames(response);
  const runFrame = await eventually(() => stream.frames.find((frame) => frame.event === 'run'), 'the run frame', 15_000);
  return { runId: runFrame.data.runId as string, stream };
}

describe('a run executing on executor A, through gateway B', () => {
  it('is read live through GET /api/runs/{id}/events on gateway B', async () => {
    const { runId, stream: onA } = await startStreamedRun(A, 'talker');
    const onB = readFrames(await open(B, 'GET', `/api/runs/${runId}/events`));
    const [framesA, framesB] = await Promise.all([onA.ended, onB.ended]);

    expect(framesA.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    expect(framesB.map((frame) => Number(frame.id))).toEqual(framesB.map((_, index) => index + 1));
    expect(framesB[0].event).toBe('run.started');
    expect(framesB.at(-1)!.event).toBe('run.completed');
    const textOf = (frames: TimedFrame[], event: string, pick: (frame: TimedFrame) => string) =>
      frames
        .filter((frame) => frame.event === event)
        .map(pick)
        .join('');
    const deltasOnB = framesB.filter((frame) => frame.event === 'message.delta');
    expect(textOf(framesB, 'message.delta', (frame) => frame.data.data.text)).toBe(
      textOf(framesA, 'update', (frame) => (frame.data.type === 'text-delta' ? frame.data.text : '')),
    );
    // Live, not history read once it was over: B had text while A's stream still went on.
    expect(deltasOnB.length).toBeGreaterThan(5);
    expect(deltasOnB[1].at).toBeLessThan(framesA.at(-1)!.at);
  });

  it('is stopped by a cancel sent to gateway B: 202, and the stream on A ends Canceled', async () => {
    const { runId, stream: onA } = await startStreamedRun(A, 'hanging');
    const canceled = await via(B, 'POST', `/api/runs/${runId}/cancel`);
    expect(canceled.status, canceled.text).toBe(202);
    const framesA = await onA.ended;
    expect(framesA.at(-1)).toMatchObject({ event: 'done', data: { status: 'Canceled' } });
    expect((await via(B, 'GET', `/api/runs/${runId}`)).body.status).toBe('Canceled');
    const events = parseSseFrames((await via(B, 'GET', `/api/runs/${runId}/events`)).text);
    expect(events.filter((event) => TERMINAL_EVENTS.includes(event.event)).map((event) => event.event)).toEqual(['run.canceled']);
  });
});

describe('executor A SIGKILLed amid 100 queued runs', () => {
  const runIds: string[] = [];

  it('every run is executed to Completed once, the killed executor’s runs by the other one', async () => {
    // Submitted through both gateways, so both executors queue them; both lease from the one queue.
    const submit = async (index: number) => {
      const queued = await via(index % 2, 'POST', '/api/agents/steady/run', {
        body: { message: `queued ${index}` },
        headers: { prefer: 'respond-async' },
      });
      expect(queued.status, queued.text).toBe(202);
      runIds.push(queued.body.runId);
    };
    for (let index = 0; index < QUEUED_RUNS; index += 10)
      await Promise.all(Array.from({ length: 10 }, (_, offset) => submit(index + offset)));

    const statuses = async () => {
      const runs = (await via(B, 'GET', `/api/runs?agentName=steady&take=200`)).body as Array<{ id: string; status: string }>;
      return new Map(runs.map((run) => [run.id, run.status]));
    };
    const ended = (found: Map<string, string>) => [...found.values()].filter((status) => TERMINAL_STATUSES.includes(status)).length;
    await eventually(async () => (ended(await statuses()) >= QUEUED_RUNS / 3 ? true : undefined), 'a third of the runs to end', 60_000);
    // Both job workers hold a run that started (its run.started stored): the kill interrupts at least one of A's.
    await eventually(
      async () => {
        const { rows } = await database.query<{ workers: string }>(
          `select count(distinct j.lease_owner) as workers from "${hangar.schemaPrefix}_runs".jobs j
            where j.status = 'leased' and j.run_id = any($1)
              and exists (select 1 from "${hangar.schemaPrefix}_runs".run_events e where e.run_id = j.run_id and e.type = 'run.started')`,
          [runIds],
        );
        return Number(rows[0].workers) === 2 ? true : undefined;
      },
      'both executors to be executing a started run',
      30_000,
    );
    const executor = hangar.processes.get('RunExecutor')!;
    executor.kill('SIGKILL');
    await hangar.exits.get('RunExecutor');
    const endedAtKill = ended(await statuses());
    expect(endedAtKill, 'the kill came before every run ended').toBeLessThan(QUEUED_RUNS);

    const final = await eventually(
      async () => {
        const found = await statuses();
        return ended(found) === QUEUED_RUNS ? found : undefined;
      },
      'every run to end',
      60_000,
    );
    expect(new Set(runIds).size).toBe(QUEUED_RUNS);
    expect(runIds.filter((runId) => final.get(runId) !== 'Completed').map((runId) => [runId, final.get(runId)])).toEqual([]);
    expect(hangar.processes.get('RunExecutor#2')!.exitCode).toBeNull();
  }, 120_000);

  it('run_events holds each run’s events as 1..n, with one terminal event, last; the kill interrupted runs that were executing', async () => {
    const { rows } = await database.query<{ run_id: string; seq: number; type: string }>(
      `select run_id, seq, type from "${hangar.schemaPrefix}_runs".run_events where run_id = any($1) order by run_id, seq`,
      [runIds],
    );
    const events = byRun(rows);
    const troubles = runIds.flatMap((runId) => {
      const stored = events.get(runId) ?? [];
      const terminal = stored.filter((event) => TERMINAL_EVENTS.includes(event.type));
      return [
        ...(stored.some((event, index) => event.seq !== index + 1) ? [`${runId}: seqs ${stored.map((event) => event.seq)}`] : []),
        ...(terminal.length !== 1 || stored.at(-1) !== terminal[0]
          ? [`${runId}: terminal events ${terminal.map((event) => `${event.seq} ${event.type}`)} of ${stored.length}`]
          : []),
      ];
    });
    expect(troubles).toEqual([]);
    // A run executed again after the kill starts again (a second run.started after the first attempt's events).
    const executedAgain = runIds.filter((runId) => events.get(runId)!.filter((event) => event.type === 'run.started').length > 1);
    console.log(`executor A SIGKILLed: ${executedAgain.length} of ${QUEUED_RUNS} runs were executing there and were executed again`);
    expect(executedAgain.length).toBeGreaterThan(0);
  });

  it('Kafka carries each run’s stored events, 1..n in order, nothing more; a record shipped twice is the same record', async () => {
    const { rows } = await database.query<{ run_id: string; seq: number; type: string; data: unknown }>(
      `select run_id, seq, type, data from "${hangar.schemaPrefix}_runs".run_events where run_id = any($1) order by run_id, seq`,
      [runIds],
    );
    const stored = byRun(rows);
    const onKafka = (runId: string) => shipped.filter((record) => record.event.runId === runId);
    // A relay killed mid-round holds the outbox lease until it runs out (OUTBOX_SETTINGS.leaseMs, 10 s); the other relay ships then.
    await eventually(
      () =>
        runIds.every((runId) => new Set(onKafka(runId).map((record) => record.event.seq)).size >= stored.get(runId)!.length)
          ? true
          : undefined,
      'every stored event on Kafka',
      45_000,
    );
    let redelivered = 0;
    const troubles = runIds.flatMap((runId) => {
      const records = onKafka(runId);
      const firstCopies = records.filter((record, index) => records.findIndex((other) => other.event.seq === record.event.seq) === index);
      redelivered += records.length - firstCopies.length;
      const expected = stored.get(runId)!.map((row) => [row.seq, row.type, row.data]);
      return [
        ...(records.some((record) => record.key !== runId) ? [`${runId}: keyed otherwise`] : []),
        // In order, without gaps, and nothing that run_events does not hold.
        ...(!isDeepStrictEqual(
          firstCopies.map(({ event }) => [event.seq, event.type, event.data]),
          expected,
        )
          ? [
              `${runId}: ${firstCopies.map(({ event }) => `${event.seq} ${event.type}`)} on Kafka, ${expected.map(([seq, type]) => `${seq} ${type}`)} stored`,
            ]
          : []),
        // At least once (a relay that dies mid-shipment leaves its rows to the next): a repeat is a copy, never another event.
        ...records
          .filter((record) => !isDeepStrictEqual(record.event, firstCopies.find((first) => first.event.seq === record.event.seq)!.event))
          .map((record) => `${runId}: seq ${record.event.seq} shipped as two different events`),
      ];
    });
    console.log(`Kafka: ${rows.length} events of ${QUEUED_RUNS} runs, ${redelivered} shipped again after the kill`);
    expect(troubles).toEqual([]);
  }, 60_000);
});

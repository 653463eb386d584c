import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  dropSchemas,
  listening,
  spawnAllInOne,
  TEST_KAFKA_BROKERS,
  TEST_POSTGRES_URL,
  TEST_TOKEN,
  uniqueSchemaPrefix,
  type AllInOneProcess,
} from '@hangar/testing';

/**
 * Webhook delivery on one all-in-one process, per engine:
 * - throughput: BENCH_DELIVERIES `webhook.test` deliveries queued through `POST /api/webhooks/{name}/test`
 *   (BENCH_CONCURRENCY requests in flight, spread over BENCH_SUBSCRIPTIONS subscriptions) to a loopback
 *   receiver that answers 200 at once; deliveries/s from the first request sent to the last delivery
 *   received, beside how fast the API queued them. Then as many queued while the subscriptions are
 *   disabled and drained once enabled: the delivery worker's own rate, queuing apart. Every delivery
 *   must arrive once (distinct `webhook-id`).
 * - latency: BENCH_RUNS sequential JSON-mode runs on the offline Demo provider, each awaited at the
 *   receiver before the next starts; receiver arrival − the run's `completedAt` (both this machine's clock).
 * BENCH_ENGINES=pglite,postgres,kafka (the default): embedded PGlite; PostgreSQL; PostgreSQL with Kafka
 * as the event log, only when a broker already answers on TEST_KAFKA_BROKERS (none is started here).
 * Exits non-zero when a delivery goes missing.
 */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ENGINES = (process.env.BENCH_ENGINES ?? 'pglite,postgres,kafka').split(',').map((name) => name.trim());
/** How long the receiver may stay silent before the missing deliveries are given up on. */
const STALL_MS = 30_000;

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const auth = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
const now = () => performance.timeOrigin + performance.now();

/** Counts `webhook.test` deliveries by `webhook-id` and notes when each run's `run.completed` arrived; reads no more than that. */
async function startReceiver() {
  const seen = new Map<string, number>();
  const runArrivals = new Map<string, { at: number; completedAt: string }>();
  let firstArrival = 0;
  let lastArrival = 0;
  let runDuplicates = 0;
  let changed = () => {};
  const server: Server = createServer((request, response) => {
    const at = now();
    if (request.url === '/runs') {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { data } = JSON.parse(Buffer.concat(chunks).toString()) as { data: { id: string; completedAt: string } };
        if (runArrivals.has(data.id)) runDuplicates++;
        else runArrivals.set(data.id, { at, completedAt: data.completedAt });
        response.writeHead(200).end();
        changed();
      });
      return;
    }
    const id = String(request.headers['webhook-id']);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    firstArrival ||= at;
    lastArrival = at;
    request.resume();
    request.on('end', () => {
      response.writeHead(200).end();
      changed();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    runArrivals,
    /** Forgets the `webhook.test` deliveries seen so far. */
    reset() {
      seen.clear();
      firstArrival = 0;
      lastArrival = 0;
    },
    get firstArrival() {
      return firstArrival;
    },
    get lastArrival() {
      return lastArrival;
    },
    get runDuplicates() {
      return runDuplicates;
    },
    /** Resolves once `done()` holds, or with false after STALL_MS without a delivery. */
    until(done: () => boolean): Promise<boolean> {
      return new Promise((resolve) => {
        let stall: NodeJS.Timeout;
        const check = () => {
          if (!done()) return;
          clearTimeout(stall);
          changed = () => {};
          resolve(true);
        };
        const rearm = () => {
          clearTimeout(stall);
          stall = setTimeout(() => {
            changed = () => {};
            resolve(false);
          }, STALL_MS);
        };
        changed = () => {
          rearm();
          check();
        };
        rearm();
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function call(hangar: AllInOneProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${hangar.url}${path}`, {
    method,
    headers: { ...auth, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? (JSON.parse(text) as any) : undefined };
}

async function expectStatus(result: Promise<{ status: number; text: string; body: any }>, expected: number[], what: string) {
  const { status, text, body } = await result;
  if (!expected.includes(status)) throw new Error(`${what}: HTTP ${status} ${text}`);
  return body;
}

async function brokerAnswers(): Promise<boolean> {
  const [host, port] = TEST_KAFKA_BROKERS[0].split(':');
  return listening(host, Number(port));
}

/** Sends `count` POST …/test with CONCURRENCY in flight, round-robin over the subscriptions. */
async function queueTests(hangar: AllInOneProcess, count: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const name = `bench-${next++ % SUBSCRIPTIONS}`;
        await expectStatus(call(hangar, 'POST', `/api/webhooks/${name}/test`), [202], `POST /api/webhooks/${name}/test`);
      }
    }),
  );
}

async function subscribe(hangar: AllInOneProcess, receiver: Receiver, name: string, path: string, events: string[], enabled = true) {
  const body = { url: `${receiver.url}${path}`, events, secretKey: 'Hangar:WebhookSecrets:bench', enabled };
  await expectStatus(call(hangar, 'PUT', `/api/webhooks/${name}`, body), [200, 201], `PUT /api/webhooks/${name}`);
}

const setTestSubscriptions = async (hangar: AllInOneProcess, receiver: Receiver, enabled: boolean) => {
  for (let index = 0; index < SUBSCRIPTIONS; index++)
    await subscribe(hangar, receiver, `bench-${index}`, `/test/${index}`, ['webhook.test'], enabled);
};

/** Waits for every delivery after a short settle (a duplicate from a lease taken over would be on its way); counts what came. */
async function collect(receiver: Receiver) {
  const complete = await receiver.until(() => receiver.seen.size >= DELIVERIES);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const arrivals = [...receiver.seen.values()].reduce((sum, count) => sum + count, 0);
  return { duplicates: arrivals - receiver.seen.size, missing: complete ? 0 : DELIVERIES - receiver.seen.size };
}

/**
 * Two figures: deliveries queued as fast as the API takes them, from the first request to the last
 * arrival (bounded by the slower of queuing and delivering); and the same number queued while the
 * subscriptions are disabled, then enabled, from the first arrival to the last (the worker alone).
 */
async function throughput(hangar: AllInOneProcess, receiver: Receiver) {
  // Warm-up: one delivery per subscription, so connections and JIT are ready; then counted afresh.
  await queueTests(hangar, SUBSCRIPTIONS);
  if (!(await receiver.until(() => receiver.seen.size >= SUBSCRIPTIONS))) throw new Error('the warm-up deliveries did not arrive');
  receiver.reset();

  const started = now();
  await queueTests(hangar, DELIVERIES);
  const queuedMs = now() - started;
  const live = await collect(receiver);
  const receivedMs = receiver.lastArrival - started;

  receiver.reset();
  await setTestSubscriptions(hangar, receiver, false);
  await queueTests(hangar, DELIVERIES);
  // Enabling does not nudge the worker: its next poll (≤ 1 s) finds the backlog.
  await setTestSubscriptions(hangar, receiver, true);
  const drained = await collect(receiver);
  const drainMs = receiver.lastArrival - receiver.firstArrival;
  return {
    queuedMs,
    receivedMs,
    perSecond: (DELIVERIES / receivedMs) * 1000,
    drainMs,
    drainPerSecond: (DELIVERIES / drainMs) * 1000,
    duplicates: live.duplicates + drained.duplicates,
    missing: live.missing + drained.missing,
  };
}

async function oneRun(hangar: AllInOneProcess, receiver: Receiver, key: string) {
  const run = await expectStatus(
    call(hangar, 'POST', '/api/agents/bench/run', { message: 'hi' }, { 'idempotency-key': key }),
    [200],
    'run',
  );
  if (run.status !== 'Completed') throw new Error(`run ${run.runId} ended ${run.status}`);
  if (!(await receiver.until(() => receiver.runArrivals.has(run.runId)))) return undefined;
  const { at, completedAt } = receiver.runArrivals.get(run.runId)!;
  return at - Date.parse(completedAt);
}

async function latency(hangar: AllInOneProcess, receiver: Receiver, engine: string) {
  await expectStatus(
    call(hangar, 'POST', '/api/agents', { name: 'bench', model: { provider: 'demo', model: 'echo' } }),
    [201],
    'POST /api/agents',
  );
  for (let warm = 0; warm < 10; warm++) await oneRun(hangar, receiver, `${engine}-warm-${warm}`);
  const samples: number[] = [];
  for (let index = 0; index < RUNS; index++) {
    const ms = await oneRun(hangar, receiver, `${engine}-${index}`);
    // One lost delivery already fails the bench; waiting out the stall for each later run would only take long.
    if (ms === undefined) return { samples: samples.sort((a, b) => a - b), missing: 1, duplicates: receiver.runDuplicates };
    samples.push(ms);
  }
  return { samples: samples.sort((a, b) => a - b), missing: 0, duplicates: receiver.runDuplicates };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function bench(engine: string) {
  const schemaPrefix = uniqueSchemaPrefix();
  const postgres = { HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL, HANGAR__Stores__Postgres__SchemaName: schemaPrefix };
  const engineEnv: Record<string, string> =
    engine === 'pglite'
      ? {}
      : engine === 'postgres'
        ? postgres
        : { ...postgres, HANGAR__Kafka__Brokers: TEST_KAFKA_BROKERS.join(','), HANGAR__Kafka__TopicPrefix: `${schemaPrefix}.` };
  const receiver = await startReceiver();
  let hangar: AllInOneProcess | undefined;
  try {
    hangar = await spawnAllInOne({
      env: {
        ...engineEnv,
        HANGAR__Providers__demo__Kind: 'Demo',
        HANGAR__Providers__demo__DefaultModel: 'echo',
        HANGAR__Hangar__WebhookSecrets__bench: SECRET,
        HANGAR__Webhooks__AllowPrivateNetworkTargets: 'true',
        HANGAR__Webhooks__AllowInsecureHttp: 'true',
      },
    });
    await setTestSubscriptions(hangar, receiver, true);
    await subscribe(hangar, receiver, 'bench-runs', '/runs', ['run.completed']);

    const sent = await throughput(hangar, receiver);
    console.log(
      `${engine}: ${DELIVERIES} webhook.test queued in ${(sent.queuedMs / 1000).toFixed(2)} s (${((DELIVERIES / sent.queuedMs) * 1000).toFixed(0)} POST …/test per s, ${CONCURRENCY} in flight); ` +
        `last received after ${(sent.receivedMs / 1000).toFixed(2)} s = ${sent.perSecond.toFixed(0)} deliveries/s; ` +
        `${DELIVERIES} queued while disabled drained in ${(sent.drainMs / 1000).toFixed(2)} s = ${sent.drainPerSecond.toFixed(0)} deliveries/s; ` +
        `duplicates ${sent.duplicates}, missing ${sent.missing}`,
    );
    const runs = await latency(hangar, receiver, engine);
    console.log(
      `${engine}: ${runs.samples.length} sequential runs, run.completed → receiver p50 ${percentile(runs.samples, 50).toFixed(1)} ms, p99 ${percentile(runs.samples, 99).toFixed(1)} ms, ` +
        `max ${percentile(runs.samples, 100).toFixed(1)} ms, min ${percentile(runs.samples, 0).toFixed(1)} ms; duplicates ${runs.duplicates}` +
        (runs.missing ? `; run ${runs.samples.length + 1}'s delivery never arrived, the remaining runs were not made` : ''),
    );
    return { engine, sent, runs };
  } finally {
    await hangar?.stop();
    await receiver.close();
    if (engine !== 'pglite') await dropSchemas(schemaPrefix);
  }
}

const unknown = ENGINES.filter((engine) => !['pglite', 'postgres', 'kafka'].includes(engine));
if (unknown.length) throw new Error(`BENCH_ENGINES: unknown ${unknown.join(', ')} (pglite, postgres, kafka)`);
const table: string[] = [];
let missing = 0;
for (const engine of ENGINES) {
  if (engine === 'kafka' && !(await brokerAnswers())) {
    const why = `skipped: no Kafka broker answers on ${TEST_KAFKA_BROKERS[0]} (deploy/local/kafka.sh start runs one)`;
    console.log(`kafka: ${why}`);
    table.push(`webhooks  ${'pg+kafka'.padEnd(8)} ${why}`);
    continue;
  }
  const { sent, runs } = await bench(engine);
  missing += sent.missing + runs.missing;
  table.push(
    `webhooks  ${(engine === 'kafka' ? 'pg+kafka' : engine).padEnd(8)} deliveries/s ${sent.perSecond.toFixed(0).padStart(5)}  ` +
      `(queued ${DELIVERIES} in ${(sent.queuedMs / 1000).toFixed(1)} s; backlog drained ${sent.drainPerSecond.toFixed(0)}/s)  ` +
      `run.completed→receiver p50 ${percentile(runs.samples, 50).toFixed(1)} ms p99 ${percentile(runs.samples, 99).toFixed(1)} ms max ${percentile(runs.samples, 100).toFixed(0)} ms  ` +
      `duplicates ${sent.duplicates + runs.duplicates}  missing ${sent.missing + runs.missing}`,
  );
}
console.log(`\n${table.join('\n')}`);
if (missing) {
  console.error(`FAILED: ${missing} webhook deliveries never arrived`);
  process.exitCode = 1;
}

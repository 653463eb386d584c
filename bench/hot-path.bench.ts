import { dropSchemas, spawnAllInOne, TEST_POSTGRES_URL, TEST_TOKEN } from '@hangar/testing';
import { benchEngines, benchEntry } from './engines.js';
import pg from 'pg';
import { apiTarget, compatibleTarget, directTarget } from './hot-path/client.js';
import { measureFirehose } from './hot-path/firehose.js';
import { measureFirstToken } from './hot-path/first-token.js';
import { measureIdleStreams, printIdle, startHangingRun, type SqlCounters } from './hot-path/idle-streams.js';
import { gcOnSignalNodeOptions, spawnScript, stopChild } from './hot-path/processes.js';
import { printSummary, type Figures } from './hot-path/summary.js';
import { compareThroughput } from './hot-path/throughput.js';

/**
 * The run engine's hot paths, each measured through Hangar (all-in-one in its own process, the
 * built JavaScript unless BENCH_SOURCE=tsx) and
 * through a raw node:http streaming proxy to the same mock upstream (the baseline), in one run:
 * first-token added latency, short runs/s under concurrency (JSON and SSE), events/s on one
 * stream, and the cost of idle `/events` streams. Engines: PGlite and in-process messaging, or
 * with BENCH_ENGINES=real PostgreSQL, Redis and Kafka. Everything listens on 127.0.0.1 only.
 */
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const IDLE_STREAMS = Number(process.env.BENCH_IDLE_STREAMS ?? 1000);
/** How many hanging runs the idle streams are spread over. */
const IDLE_RUNS = Number(process.env.BENCH_IDLE_RUNS ?? 1);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100);
const STREAM_CHUNKS = Number(process.env.BENCH_STREAM_CHUNKS ?? 20_000);
const FIREHOSE_TIMEOUT_MS = 120_000;
const POLL_INTERVAL_MS = 250; // Hangar:Api:RunEventPollInterval's default
const AGENTS = ['ttft', 'short', 'firehose', 'hang'];
/** BENCH_WORKLOADS=json,sse (say) measures only those: first-token, json, sse, firehose, idle. */
const WORKLOADS = new Set((process.env.BENCH_WORKLOADS ?? 'first-token,json,sse,firehose,idle').split(','));
const { real: realEngines, name: engines, schemaPrefix, env: engineEnv } = benchEngines();
const built = benchEntry('built');

/** PostgreSQL's counters for the idle workload: database-wide commits, scans of this run's schemas. */
function sqlCounters(client: pg.Client) {
  return async (): Promise<SqlCounters> => {
    const database = await client.query<{ n: string }>(
      'select sum(xact_commit)::bigint as n from pg_stat_database where datname = current_database()',
    );
    const tables = await client.query<{ n: string }>(
      'select coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::bigint as n from pg_stat_user_tables where schemaname = $1 or schemaname like $2',
      [schemaPrefix, `${schemaPrefix}\\_%`],
    );
    return { transactions: Number(database.rows[0].n), scans: Number(tables.rows[0].n) };
  };
}

/** Runs one workload; a failure is printed and leaves its figures out rather than ending the benchmark. */
async function workload<T>(key: string, name: string, run: () => Promise<T>): Promise<T | undefined> {
  if (!WORKLOADS.has(key)) return undefined;
  console.log(`\n— ${name}`);
  try {
    return await run();
  } catch (error) {
    console.log(`  ${name} failed: ${(error as Error).stack ?? error}`);
    return undefined;
  }
}

console.log(
  `hot-path benchmark — ${built.name} on ${engines}; clients ${CLIENTS}, duration ${DURATION_S} s, samples ${SAMPLES}, ` +
    `idle streams ${IDLE_STREAMS}, one-stream chunks ${STREAM_CHUNKS}`,
);
const mock = await spawnScript('./mock-upstream.ts', { BENCH_STREAM_CHUNKS: String(STREAM_CHUNKS) });
const proxy = await spawnScript('./proxy.ts', { BENCH_MOCK_URL: mock.url, NODE_OPTIONS: gcOnSignalNodeOptions() });
const hangar = await spawnAllInOne({
  entry: built.entry,
  // BENCH_NODE_ARGS="--max-semi-space-size=64" (say): V8 or Node flags for Hangar's process, to measure a setting.
  nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean),
  env: {
    HANGAR__Providers__mock__Kind: 'OpenAICompatible',
    HANGAR__Providers__mock__Endpoint: mock.url,
    NODE_OPTIONS: gcOnSignalNodeOptions(), // only for the RSS readings: SIGUSR2 collects garbage
    ...engineEnv,
  },
});
const database = realEngines ? new pg.Client({ connectionString: TEST_POSTGRES_URL }) : undefined;
await database?.connect();
const hangingRuns: Array<{ runId: string; close(): void }> = [];

const cpuPids = { proxy: proxy.child.pid, hangar: hangar.child.pid, mock: mock.child.pid };
const direct = directTarget(mock.url);
const viaProxy = apiTarget('proxy', proxy.url);
const viaHangar = apiTarget('Hangar', hangar.url, TEST_TOKEN);
const viaCompatible = compatibleTarget(hangar.url, TEST_TOKEN);
const figures: Figures = {};
try {
  for (const name of AGENTS) {
    const created = await fetch(`${hangar.url}/api/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, model: { provider: 'mock', model: name } }),
    });
    if (created.status !== 201) throw new Error(`agent ${name}: ${created.status} ${await created.text()}`);
  }

  figures.firstToken = await workload('first-token', 'first-token added latency', () =>
    measureFirstToken(direct, viaProxy, viaHangar, viaCompatible, SAMPLES),
  );
  figures.json = await workload('json', 'short runs/s, JSON mode', () =>
    compareThroughput(viaProxy, viaHangar, 'JSON', CLIENTS, DURATION_S * 1000, cpuPids),
  );
  figures.sse = await workload('sse', 'short runs/s, SSE mode', () =>
    compareThroughput(viaProxy, viaHangar, 'SSE', CLIENTS, DURATION_S * 1000, cpuPids),
  );
  figures.firehose = await workload('firehose', 'events/s on one stream', () =>
    measureFirehose(direct, viaProxy, viaHangar, STREAM_CHUNKS, FIREHOSE_TIMEOUT_MS),
  );
  // Idle streams last: a fresh process frees start-up memory for half a minute, which would blur the RSS growth.
  figures.idle = await workload('idle', 'idle /events streams', async () => {
    console.log(
      `${IDLE_STREAMS} idle streams requested over ${IDLE_RUNS} run(s); CPU and counters over ${DURATION_S} s of idleness without, then with them:`,
    );
    const common = { count: IDLE_STREAMS, seconds: DURATION_S };
    const proxied = await measureIdleStreams({
      ...common,
      target: viaProxy,
      pid: proxy.child.pid!,
      paths: ['/api/runs/idle/events'],
      headers: {},
    });
    printIdle('proxy', IDLE_STREAMS, proxied, POLL_INTERVAL_MS);
    for (let started = 0; started < IDLE_RUNS; started += 1) hangingRuns.push(await startHangingRun(viaHangar));
    const tails = await measureIdleStreams({
      ...common,
      target: viaHangar,
      pid: hangar.child.pid!,
      paths: hangingRuns.map((run) => `/api/runs/${run.runId}/events`),
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
      sql: database && sqlCounters(database),
    });
    printIdle('Hangar', IDLE_STREAMS, tails, POLL_INTERVAL_MS);
    return { proxy: proxied, hangar: tails, requested: IDLE_STREAMS, pollIntervalMs: POLL_INTERVAL_MS };
  });
  printSummary(engines, figures);
} finally {
  for (const run of hangingRuns) run.close();
  await stopChild(hangar.child, hangar.exited);
  await proxy.stop();
  await mock.stop();
  await database?.end();
  if (realEngines) await dropSchemas(schemaPrefix);
}

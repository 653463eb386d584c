import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnAllInOne, TEST_TOKEN } from '@hangar/testing';
import { benchEngines, benchEntry } from './engines.js';
import { spawnScript } from './hot-path/processes.js';

/**
 * Where the CPU of runs goes: all-in-one (PGlite, in-process messaging) with a CPU profile under
 * 64 clients of short JSON runs (BENCH_WORKLOAD=sse: streamed ones), or with BENCH_WORKLOAD=firehose under streamed runs of 20,000
 * chunks one after another; then each busy thread's self time by library and its hottest
 * functions. The profile files are kept for a closer look (Chrome DevTools, speedscope). With
 * BENCH_ENGINES=real on PostgreSQL, Redis and Kafka.
 */
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 15);
const FIREHOSE = process.env.BENCH_WORKLOAD === 'firehose';
const STREAMED = process.env.BENCH_WORKLOAD === 'sse';
const profileDir = mkdtempSync(join(tmpdir(), 'hangar-profile-'));
const engines = benchEngines();
// The sources by default: a bundle's profile names one file where the sources' name each library.
const built = benchEntry('tsx');

const mock = await spawnScript('./mock-upstream.ts');
const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
let hangar: Awaited<ReturnType<typeof spawnAllInOne>> | undefined;
try {
  hangar = await spawnAllInOne({
    entry: built.entry,
    env: { HANGAR__Providers__mock__Kind: 'OpenAICompatible', HANGAR__Providers__mock__Endpoint: mock.url, ...engines.env },
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  });
  const { url } = hangar;
  const agent = FIREHOSE ? 'firehose' : 'short';
  const created = await fetch(`${url}/api/agents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: agent, model: { provider: 'mock', model: agent } }),
  });
  if (created.status !== 201) throw new Error(`agent: ${created.status} ${await created.text()}`);
  const until = Date.now() + DURATION_S * 1000;
  if (FIREHOSE) await streamFirehoses(url, until);
  else await shortJsonRuns(url, until);
} finally {
  await hangar?.stop();
  await mock.stop();
}

/** Streamed runs of the firehose model, one after another, read to their end. */
async function streamFirehoses(url: string, until: number) {
  let streams = 0;
  while (Date.now() < until) {
    const response = await fetch(`${url}/api/agents/firehose/run`, { method: 'POST', headers, body: JSON.stringify({ message: 'hi' }) });
    await response.text();
    streams++;
  }
  console.log(`${DURATION_S} s: ${streams} streamed runs of 20,000 chunks`);
}

/** CLIENTS clients of short runs, each asking for one JSON response (or, BENCH_WORKLOAD=sse, reading the run's stream). */
async function shortJsonRuns(url: string, until: number) {
  let completed = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const response = await fetch(`${url}/api/agents/short/run`, {
          method: 'POST',
          // An Idempotency-Key asks for one JSON response.
          headers: STREAMED ? headers : { ...headers, 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify({ message: 'hi' }),
        }).catch(() => undefined);
        await response?.text();
        if (response?.ok) completed++;
        else failed++;
      }
    }),
  );
  console.log(
    `${CLIENTS} clients, ${DURATION_S} s: ${(completed / DURATION_S).toFixed(1)} short ${STREAMED ? 'SSE' : 'JSON'} runs/s, ${failed} failed`,
  );
}

// One profile per thread (`CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`): the main thread is 0,
// the embedded database's worker another; a thread that did next to nothing is skipped.
for (const name of readdirSync(profileDir).sort()) {
  const file = join(profileDir, name);
  if (statSync(file).size < 100_000) continue;
  const thread = name.split('.')[4];
  printProfile(file, thread === '0' ? 'main thread' : `worker thread ${thread}`);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

function printProfile(file: string, thread: string) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byLibrary = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const micros = profile.timeDeltas[index] ?? 0;
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    total += micros;
    const library = libraryOf(functionName, url);
    byLibrary.set(library, (byLibrary.get(library) ?? 0) + micros);
    const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  });
  const top = (entries: Map<string, number>, count: number) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, micros]) => `  ${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  console.log(`\n${thread}: ${file} (${(total / 1e6).toFixed(1)} s, start-up included)\nself time by library:\n${top(byLibrary, 15)}`);
  console.log(`hottest functions:\n${top(byFunction, 25)}`);
}

function libraryOf(functionName: string, url: string): string {
  if (functionName === '(idle)' || functionName === '(garbage collector)' || functionName === '(program)') return functionName;
  if (url.startsWith('wasm://') || url.includes('@electric-sql/pglite')) return 'PGlite';
  const hangar = /\/(services|libs)\/([^/]+)\/src\//.exec(url);
  if (hangar && !url.includes('node_modules')) return `hangar ${hangar[2]}`;
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1];
  return url.startsWith('node:') || url === '' ? 'node core' : url;
}

import { dropSchemas, spawnAllInOne, startDistributed, startMockOpenAI, TEST_TOKEN } from '@hangar/testing';
import { cpuAccount, describeCpuAccount } from './cpu-by-process.js';
import { benchEngines, buildDist } from './engines.js';

/**
 * A streamed run through Hangar (gateway → run-executor → AI SDK → mock upstream) against the same
 * completion fetched from the mock directly. Hangar is all-in-one in its own process, on PGlite and
 * in-process messaging, or with BENCH_ENGINES=real PostgreSQL, Redis and Kafka (the local broker is
 * started by deploy/local/kafka.sh when none answers). With BENCH_SHAPE=split it is the split shape
 * on those real engines, from the built JavaScript (`npm run build`): every service its own process,
 * BENCH_EXECUTORS run executors (1 by default), each behind a gateway of its own, and the clients
 * spread over the gateways.
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const DURATION_MS = Number(process.env.BENCH_DURATION ?? 10) * 1000;
const SPLIT = process.env.BENCH_SHAPE === 'split';
const EXECUTORS = Number(process.env.BENCH_EXECUTORS ?? 1);
const REPLY = 'Hangar streams this answer back one word at a time so that first and last token are apart.';

const mock = await startMockOpenAI();
mock.script('bench', () => ({ text: REPLY, usage: { prompt: 20, completion: 18 } }));
const provider = { HANGAR__Providers__mock__Kind: 'OpenAICompatible', HANGAR__Providers__mock__Endpoint: mock.url };
const { urls, stop, schemaPrefix, pids } = SPLIT ? await startSplit() : await startAllInOne();
/** Gateway of the n-th request or client. */
const gateway = (n: number) => urls[n % urls.length];

async function startAllInOne() {
  const engines = benchEngines();
  const hangar = await spawnAllInOne({ env: { ...provider, ...engines.env } });
  console.log(`shape: all-in-one; engines: ${engines.name}`);
  return {
    urls: [hangar.url],
    stop: () => hangar.stop(),
    schemaPrefix: engines.real ? engines.schemaPrefix : undefined,
    pids: new Map([[hangar.child.pid!, 'Hangar all-in-one']]),
  };
}

async function startSplit() {
  if (process.env.BENCH_ENGINES && process.env.BENCH_ENGINES !== 'real') throw new Error('the split shape runs on the real engines only');
  process.env.BENCH_ENGINES = 'real';
  const engines = benchEngines();
  buildDist();
  const hangar = await startDistributed({
    builtDir: 'dist',
    gateways: EXECUTORS,
    runExecutors: EXECUTORS,
    schemaPrefix: engines.schemaPrefix,
    env: { ...provider, ...engines.env },
    // The test fixtures' code agents are TypeScript, which the built services cannot load; the bench runs a stored agent.
    config: { CodeAgents: { Modules: [] } },
  });
  console.log(`shape: split, ${EXECUTORS} run executor(s) each behind its own gateway; engines: ${engines.name}`);
  const pids = new Map([...hangar.processes].map(([name, child]) => [child.pid!, name as string]));
  return { urls: hangar.urls, stop: () => hangar.cleanup(), schemaPrefix: engines.schemaPrefix, pids };
}
const auth = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };

/** Reads a streamed response, noting when the first token and the end arrived. */
async function timed(response: Response, isToken: (chunk: string) => boolean) {
  const started = performance.now();
  let first: number | undefined;
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    if (first === undefined && isToken(decoder.decode(chunk as Uint8Array, { stream: true }))) first = performance.now() - started;
  }
  return { first: first ?? Number.NaN, last: performance.now() - started };
}

async function direct() {
  const started = performance.now();
  const response = await fetch(`${mock.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const offset = performance.now() - started;
  const { first, last } = await timed(response, (text) => text.includes('"content"'));
  return { first: first + offset, last: last + offset };
}

async function throughHangar(url: string) {
  const started = performance.now();
  const response = await fetch(`${url}/api/agents/bench/run`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ message: 'hi' }),
  });
  const offset = performance.now() - started;
  const { first, last } = await timed(response, (text) => text.includes('event: update'));
  return { first: first + offset, last: last + offset };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const summary = (label: string, samples: Array<{ first: number; last: number }>) => {
  const first = samples.map((sample) => sample.first);
  const last = samples.map((sample) => sample.last);
  console.log(
    `${label}: first token p50 ${percentile(first, 50).toFixed(1)} ms, p99 ${percentile(first, 99).toFixed(1)} ms; ` +
      `last token p50 ${percentile(last, 50).toFixed(1)} ms, p99 ${percentile(last, 99).toFixed(1)} ms`,
  );
  return { first, last };
};

try {
  const created = await fetch(`${urls[0]}/api/agents`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'bench', model: { provider: 'mock', model: 'bench' } }),
  });
  if (created.status !== 201) throw new Error(`agent: ${created.status} ${await created.text()}`);
  for (let warm = 0; warm < 20; warm += 1) await throughHangar(gateway(warm));

  const directSamples: Array<{ first: number; last: number }> = [];
  const hangarSamples: Array<{ first: number; last: number }> = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    directSamples.push(await direct());
    hangarSamples.push(await throughHangar(gateway(sample)));
  }
  const upstream = summary(`mock upstream directly (${SAMPLES} sequential)`, directSamples);
  const through = summary(`through Hangar, SSE (${SAMPLES} sequential)`, hangarSamples);
  console.log(
    `added by Hangar: first token p50 +${(percentile(through.first, 50) - percentile(upstream.first, 50)).toFixed(1)} ms, ` +
      `p99 +${(percentile(through.first, 99) - percentile(upstream.first, 99)).toFixed(1)} ms; ` +
      `last token p50 +${(percentile(through.last, 50) - percentile(upstream.last, 50)).toFixed(1)} ms, ` +
      `p99 +${(percentile(through.last, 99) - percentile(upstream.last, 99)).toFixed(1)} ms`,
  );

  let completed = 0;
  let failed = 0;
  const deadline = performance.now() + DURATION_MS;
  const cpu = cpuAccount(new Map([...pids, [process.pid, 'bench (clients and mock upstream)']]));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, client) => {
      for (let round = 0; performance.now() < deadline; round += 1) {
        const response = await fetch(`${gateway(client)}/api/agents/bench/run`, {
          method: 'POST',
          headers: { ...auth, 'idempotency-key': `c${client}-r${round}` },
          body: JSON.stringify({ message: 'hi' }),
        });
        const body = (await response.json()) as { status?: string };
        if (response.status === 200 && body.status === 'Completed') completed += 1;
        else failed += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${CONCURRENCY} concurrent clients, JSON mode: ${completed} runs completed in ${seconds.toFixed(1)} s = ${(completed / seconds).toFixed(1)} runs/s (${failed} not completed)`,
  );
  console.log(`  ${describeCpuAccount(cpu.finish(completed), 'completed run')}`);
} finally {
  await stop();
  await mock.close();
  if (schemaPrefix) await dropSchemas(schemaPrefix);
}

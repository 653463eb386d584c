import { dropSchemas, spawnAllInOne, startMockOpenAI, TEST_TOKEN } from '@hangar/testing';
import { benchEngines } from './engines.js';

/**
 * A streamed run through Hangar (gateway → run-executor → AI SDK → mock upstream, all-in-one in
 * its own process) against the same completion fetched from the mock directly. The engines are
 * PGlite and in-process messaging, or with BENCH_ENGINES=real PostgreSQL, Redis and Kafka (the
 * local broker is started by deploy/local/kafka.sh when none answers).
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const DURATION_MS = Number(process.env.BENCH_DURATION ?? 10) * 1000;
const REPLY = 'Hangar streams this answer back one word at a time so that first and last token are apart.';

const mock = await startMockOpenAI();
mock.script('bench', () => ({ text: REPLY, usage: { prompt: 20, completion: 18 } }));
const engines = benchEngines();
const hangar = await spawnAllInOne({
  env: { HANGAR__Providers__mock__Kind: 'OpenAICompatible', HANGAR__Providers__mock__Endpoint: mock.url, ...engines.env },
});
console.log(`engines: ${engines.name}`);
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

async function throughHangar() {
  const started = performance.now();
  const response = await fetch(`${hangar.url}/api/agents/bench/run`, {
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
  const created = await fetch(`${hangar.url}/api/agents`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'bench', model: { provider: 'mock', model: 'bench' } }),
  });
  if (created.status !== 201) throw new Error(`agent: ${created.status} ${await created.text()}`);
  for (let warm = 0; warm < 20; warm += 1) await throughHangar();

  const directSamples: Array<{ first: number; last: number }> = [];
  const hangarSamples: Array<{ first: number; last: number }> = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    directSamples.push(await direct());
    hangarSamples.push(await throughHangar());
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
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, client) => {
      for (let round = 0; performance.now() < deadline; round += 1) {
        const response = await fetch(`${hangar.url}/api/agents/bench/run`, {
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
} finally {
  await hangar.stop();
  await mock.close();
  if (engines.real) await dropSchemas(engines.schemaPrefix);
}

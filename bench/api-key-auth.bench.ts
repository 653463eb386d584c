import { Agent, request } from 'node:http';
import { spawnAllInOne, TEST_TOKEN } from '@hangar/testing';

/**
 * What authenticating with an API key adds per request: 10,000 sequential `GET /api/agents` with the
 * static token, then with an API key (cached at the gateway after its first use), against one
 * all-in-one process; and the first use of fresh keys (a lookup in governance).
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);
const FRESH_KEYS = Number(process.env.BENCH_FRESH_KEYS ?? 200);

const hangar = await spawnAllInOne();
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function timedGet(path: string, headers: Record<string, string>): Promise<{ ms: number; status: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const call = request(`${hangar.url}${path}`, { headers, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ ms: performance.now() - started, status: response.statusCode ?? 0 }));
    });
    call.on('error', reject);
    call.end();
  });
}

async function series(headers: Record<string, string>, count: number) {
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const { ms, status } = await timedGet('/api/agents', headers);
    if (status !== 200) throw new Error(`GET /api/agents answered ${status}`);
    times.push(ms);
  }
  return times.sort((a, b) => a - b);
}

const at = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const line = (name: string, sorted: number[]) =>
  `  ${name.padEnd(28)} p50 ${at(sorted, 50).toFixed(3)} ms, p99 ${at(sorted, 99).toFixed(3)} ms`;

async function newKey(): Promise<string> {
  const created = await fetch(`${hangar.url}/api/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', role: 'Reader' }),
  });
  return ((await created.json()) as { key: string }).key;
}

try {
  const key = await newKey();
  await series({ authorization: `Bearer ${TEST_TOKEN}` }, 500); // warm-up
  await series({ authorization: `Bearer ${key}` }, 500);
  // Alternating blocks, so that drift over the run (JIT, GC, the machine) falls on both alike.
  const token: number[] = [];
  const apiKey: number[] = [];
  for (let block = 0; block < REQUESTS / 500; block++) {
    token.push(...(await series({ authorization: `Bearer ${TEST_TOKEN}` }, 500)));
    apiKey.push(...(await series({ authorization: `Bearer ${key}` }, 500)));
  }
  token.sort((a, b) => a - b);
  apiKey.sort((a, b) => a - b);
  const fresh: number[] = [];
  for (let index = 0; index < FRESH_KEYS; index++) fresh.push(...(await series({ authorization: `Bearer ${await newKey()}` }, 1)));
  fresh.sort((a, b) => a - b);
  console.log(`${REQUESTS} sequential GET /api/agents per credential (keep-alive, one all-in-one process):`);
  console.log(line('static token', token));
  console.log(line('API key (cached)', apiKey));
  console.log(line(`API key, first use (${FRESH_KEYS} keys)`, fresh));
  console.log(
    `  added by an API key: p50 ${(at(apiKey, 50) - at(token, 50)).toFixed(3)} ms, p99 ${(at(apiKey, 99) - at(token, 99)).toFixed(3)} ms; ` +
      `first use p50 +${(at(fresh, 50) - at(token, 50)).toFixed(3)} ms`,
  );
} finally {
  agent.destroy();
  await hangar.stop();
}

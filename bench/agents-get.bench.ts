import autocannon from 'autocannon';
import { dropSchemas, spawnAllInOne, TEST_TOKEN, uniqueSchemaPrefix } from '@hangar/testing';

/**
 * Latency of `GET /api/agents/{name}` through the gateway (HTTP → gRPC → registry → PGlite and back),
 * all-in-one in its own process, load from this process with autocannon.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
// BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test measures the same path on PostgreSQL.
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL;
const schemaPrefix = uniqueSchemaPrefix();

const hangar = await spawnAllInOne({
  env: POSTGRES_URL ? { HANGAR__Stores__Postgres__ConnectionString: POSTGRES_URL, HANGAR__Stores__Postgres__SchemaName: schemaPrefix } : {},
});
console.log(`store: ${POSTGRES_URL ? 'PostgreSQL' : 'PGlite (embedded)'}`);
try {
  const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
  const created = await fetch(`${hangar.url}/api/agents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'bench-agent',
      instructions: 'Benchmark me.',
      model: { provider: 'demo', model: 'echo' },
      tools: ['clock'],
    }),
  });
  if (created.status !== 201) throw new Error(`could not create the agent: ${created.status} ${await created.text()}`);

  const run = (connections: number, duration: number) =>
    autocannon({ url: `${hangar.url}/api/agents/bench-agent`, headers, connections, duration });
  await run(CONNECTIONS, 2); // warm-up: JIT and connection set-up
  const result = await run(CONNECTIONS, DURATION_S);
  const non2xx = result.non2xx + result.errors;
  console.log(
    `GET /api/agents/{name}: ${CONNECTIONS} connections, ${DURATION_S} s, ${result.requests.total} requests, ${non2xx} not 2xx\n` +
      `latency ms: p50 ${result.latency.p50}, p90 ${result.latency.p90}, p99 ${result.latency.p99}, max ${result.latency.max}\n` +
      `throughput: ${result.requests.average.toFixed(0)} req/s average`,
  );
  const single = await run(1, 5);
  console.log(`single connection: p50 ${single.latency.p50} ms, p99 ${single.latency.p99} ms, ${single.requests.average.toFixed(0)} req/s`);
} finally {
  await hangar.stop();
  if (POSTGRES_URL) await dropSchemas(schemaPrefix);
}

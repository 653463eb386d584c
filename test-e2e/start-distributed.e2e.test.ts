import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  dropSchemas,
  eventually,
  freePort,
  httpRequest,
  TEST_KAFKA_BROKERS,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  TEST_TOKEN,
  uniqueSchemaPrefix,
} from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * `npm run start:distributed` (tools/start-distributed.ts) on this machine's PostgreSQL, Redis and
 * Kafka, which answer already, so it starts only Hangar's processes: it prints the addresses once
 * both gateways are ready, a run started through one gateway is read through the other, and SIGINT
 * stops every process it started.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const prefix = uniqueSchemaPrefix();
const portOf = (url: string) => new URL(url).port;

let launcher: ChildProcess;
let exited: Promise<number | null>;
let output = '';
let gateways: string[];

beforeAll(async () => {
  gateways = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
  const postgres = new URL(TEST_POSTGRES_URL);
  const flags = {
    '--gateway-ports': gateways.map(portOf).join(','),
    '--database': postgres.pathname.slice(1),
    '--postgres-port': postgres.port,
    '--redis-port': portOf(TEST_REDIS_URL),
    '--kafka-port': TEST_KAFKA_BROKERS[0].split(':')[1],
  };
  launcher = spawn(process.execPath, ['--import', 'tsx', 'tools/start-distributed.ts', ...Object.entries(flags).flat()], {
    cwd: ROOT,
    env: {
      ...process.env,
      HANGAR__Stores__Postgres__SchemaName: prefix,
      HANGAR__Redis__ChannelPrefix: `${prefix}:`,
      HANGAR__Kafka__TopicPrefix: `${prefix}.`,
      HANGAR__Hangar__Api__AuthToken: TEST_TOKEN,
      HANGAR__Logging__Level: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launcher.stdout!.on('data', (chunk) => (output += chunk));
  launcher.stderr!.on('data', (chunk) => (output += chunk));
  exited = new Promise((resolve) => launcher.once('exit', resolve));
  const started = performance.now();
  const printed = new Promise<void>((resolve, reject) => {
    launcher.stdout!.on('data', () => output.includes('Ctrl-C stops') && resolve());
    void exited.then((code) => reject(new Error(`the launcher exited with ${code}:\n${output.slice(-4000)}`)));
  });
  await printed;
  console.log(`start:distributed printed its addresses ${Math.round(performance.now() - started)} ms after its spawn`);
}, 180_000);

afterAll(async () => {
  if (launcher?.exitCode === null) {
    launcher.kill('SIGINT');
    await exited;
  }
  await dropSchemas(prefix);
});

it('prints both gateways, every service with its pid, and the engines it found running', () => {
  for (const gateway of gateways) expect(output).toContain(gateway);
  for (const name of ['AgentRegistry', 'RunExecutor 2', 'Session', 'Skill', 'Attachment', 'Governance', 'Knowledge', 'Evaluation'])
    expect(output).toMatch(new RegExp(`${name} .* pid \\d+`));
  expect(output.match(/was already running/g)).toHaveLength(3);
});

it('serves through both gateways on the real engines: a run started on A is read on B', async () => {
  const [A, B] = gateways;
  expect((await httpRequest(B, 'GET', '/api/meta', { token: null })).body.stores).toMatchObject({
    runs: 'postgres',
    events: 'kafka',
    cache: 'redis',
  });
  const created = await httpRequest(A, 'POST', '/api/agents', { body: { name: 'split', model: { provider: 'demo', model: 'echo' } } });
  expect(created.status, created.text).toBe(201);
  const run = await httpRequest(A, 'POST', '/api/agents/split/run', {
    body: { message: 'through A' },
    headers: { 'idempotency-key': 'split-1' },
  });
  expect(run.status, run.text).toBe(200);
  // A gateway is ready on its own: its executor (the second, started last) may take a moment more to serve.
  const readOnB = await eventually(
    async () => {
      const read = await httpRequest(B, 'GET', `/api/runs/${run.body.runId}`);
      return read.status === 503 ? undefined : read;
    },
    'gateway B’s run executor serving',
    30_000,
  );
  expect(readOnB.body, readOnB.text).toMatchObject({ agentName: 'split', status: 'Completed' });
});

it('stops every process it started on SIGINT and exits 0', async () => {
  const pids = [...output.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
  expect(pids).toHaveLength(11); // eight services, a second run executor, two gateways
  launcher.kill('SIGINT');
  expect(await exited).toBe(0);
  const alive = pids.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  expect(alive).toEqual([]);
});

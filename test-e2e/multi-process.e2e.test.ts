import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SERVICE_NAMES, type ServiceName } from '@hangar/platform';
import { dropSchemas, FIXTURE_CODE_AGENTS, freePort, httpRequest, TEST_POSTGRES_URL, TEST_TOKEN, uniqueSchemaPrefix } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The distributed shape: every service its own process on PostgreSQL, reached only through the gateway. */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = `${ROOT}node_modules/.bin/tsx`;
const DIRECTORIES: Record<ServiceName | 'Gateway', string> = {
  AgentRegistry: 'agent-registry', RunExecutor: 'run-executor', Session: 'session', Skill: 'skill',
  Attachment: 'attachment', Governance: 'governance', Gateway: 'gateway',
};

const schemaPrefix = uniqueSchemaPrefix();
const processes = new Map<string, ChildProcess>();
const exits = new Map<string, Promise<number | null>>();
let gatewayUrl: string;

function startService(name: ServiceName | 'Gateway', env: Record<string, string>) {
  const child = spawn(TSX, [`services/${DIRECTORIES[name]}/src/main.ts`], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  processes.set(name, child);
  exits.set(name, new Promise((resolve) => child.once('exit', (code) => {
    if (code) console.error(`${name} exited with ${code}: ${stderr}`);
    resolve(code);
  })));
}

async function waitUntilReady(timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const ready = await httpRequest(gatewayUrl, 'GET', '/readyz', { token: null });
      if (ready.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the distributed Hangar did not become ready');
}

beforeAll(async () => {
  const ports = Object.fromEntries(await Promise.all(SERVICE_NAMES.map(async (name) => [name, await freePort()] as const)));
  const gatewayPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const shared: Record<string, string> = {
    HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL,
    HANGAR__Stores__Postgres__SchemaName: schemaPrefix,
    HANGAR__Hangar__Api__AuthToken: TEST_TOKEN,
    HANGAR__Providers__demo__Kind: 'Demo',
    HANGAR__CodeAgents__Modules: FIXTURE_CODE_AGENTS,
    HANGAR__Logging__Level: 'warn',
    HANGAR__Gateway__Port: String(gatewayPort),
  };
  for (const name of SERVICE_NAMES) {
    shared[`HANGAR__Services__${name}__Port`] = String(ports[name]);
    shared[`HANGAR__Services__${name}__Address`] = `127.0.0.1:${ports[name]}`;
  }
  for (const name of [...SERVICE_NAMES, 'Gateway'] as const) startService(name, shared);
  await waitUntilReady(90_000);
}, 120_000);

afterAll(async () => {
  for (const child of processes.values()) if (child.exitCode === null) child.kill('SIGKILL');
  await dropSchemas(schemaPrefix);
});

describe('distributed shape', () => {
  it('reports PostgreSQL as the store', async () => {
    const meta = await httpRequest(gatewayUrl, 'GET', '/api/meta', { token: null });
    expect(meta.body.stores.definitions).toBe('postgres');
  });

  it('serves the agents API across processes', async () => {
    const created = await httpRequest(gatewayUrl, 'POST', '/api/agents', { body: { name: 'distributed', model: { provider: 'demo', model: 'echo' }, agents: ['code-helper'] } });
    expect(created.status, created.text).toBe(201);
    await httpRequest(gatewayUrl, 'PUT', '/api/agents/distributed', { body: { name: 'distributed', model: { provider: 'demo', model: 'echo' }, instructions: 'v2' } });
    const diff = await httpRequest(gatewayUrl, 'GET', '/api/agents/distributed/versions/1/diff/2');
    expect(diff.status).toBe(200);
    expect([diff.body.left.version, diff.body.right.instructions]).toEqual([1, 'v2']);
    const skillChecked = await httpRequest(gatewayUrl, 'POST', '/api/agents', { body: { name: 'skilled', model: { provider: 'demo', model: 'echo' }, skills: ['absent'] } });
    expect(skillChecked.body.errors).toContainEqual(expect.objectContaining({ code: 'skill_not_found' }));
    const list = await httpRequest(gatewayUrl, 'GET', '/api/agents');
    expect(list.body.map((agent: any) => agent.name)).toEqual(expect.arrayContaining(['code-helper', 'distributed']));
  });

  it('answers 503 problem+json while a backing service is down, and every process stops gracefully on SIGTERM', async () => {
    processes.get('AgentRegistry')!.kill('SIGTERM');
    expect(await exits.get('AgentRegistry')).toBe(0);
    const unavailable = await httpRequest(gatewayUrl, 'GET', '/api/agents/distributed');
    expect(unavailable.status).toBe(503);
    expect(unavailable.body).toMatchObject({ errorType: 'service_unavailable' });
    expect(unavailable.text).not.toMatch(/at .*\.ts:\d+/);
    const ready = await httpRequest(gatewayUrl, 'GET', '/readyz', { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body.services.AgentRegistry).toBe('UNREACHABLE');
    for (const [name, child] of processes) if (name !== 'AgentRegistry') child.kill('SIGTERM');
    const codes = await Promise.all([...exits.entries()].map(async ([name, exit]) => [name, await exit]));
    expect(Object.fromEntries(codes)).toEqual(Object.fromEntries([...processes.keys()].map((name) => [name, 0])));
  });
});

import { httpRequest, startDistributed, type DistributedHangar } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The distributed shape as Kubernetes runs it: every service its own process on PostgreSQL, reached
 * only through the gateway, on schemas the migration entry applied (the services do not migrate).
 */

let hangar: DistributedHangar;
const api = (method: string, path: string, options?: Parameters<typeof httpRequest>[3]) => httpRequest(hangar.url, method, path, options);

beforeAll(async () => {
  hangar = await startDistributed({ migrationJob: true });
}, 120_000);

afterAll(async () => {
  await hangar?.cleanup();
});

describe('distributed shape', () => {
  it('reports PostgreSQL as the store', async () => {
    const meta = await api('GET', '/api/meta', { token: null });
    expect(meta.body.stores.definitions).toBe('postgres');
  });

  it('serves the agents API across processes', async () => {
    const created = await api('POST', '/api/agents', {
      body: { name: 'distributed', model: { provider: 'demo', model: 'echo' }, agents: ['code-helper'] },
    });
    expect(created.status, created.text).toBe(201);
    await api('PUT', '/api/agents/distributed', {
      body: { name: 'distributed', model: { provider: 'demo', model: 'echo' }, instructions: 'v2' },
    });
    const diff = await api('GET', '/api/agents/distributed/versions/1/diff/2');
    expect(diff.status).toBe(200);
    expect([diff.body.left.version, diff.body.right.instructions]).toEqual([1, 'v2']);
    const skillChecked = await api('POST', '/api/agents', {
      body: { name: 'skilled', model: { provider: 'demo', model: 'echo' }, skills: ['absent'] },
    });
    expect(skillChecked.body.errors).toContainEqual(expect.objectContaining({ code: 'skill_not_found' }));
    const list = await api('GET', '/api/agents');
    expect(list.body.map((agent: any) => agent.name)).toEqual(expect.arrayContaining(['code-helper', 'distributed']));
  });

  it('streams an upload through the gateway into the attachment process and back', async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(900_000, 'a')]);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'report.pdf');
    const created = await api('POST', '/api/attachments?sessionId=dist-1', { rawBody: form as never });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ mediaType: 'application/pdf', size: bytes.length });
    const downloaded = await fetch(`${hangar.url}/api/attachments/${created.body.id}`, {
      headers: { authorization: 'Bearer test-token-0123456789abcdef' },
    });
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('answers 503 problem+json on the routes of a backing service that is down while the gateway stays ready, and every process stops gracefully on SIGTERM', async () => {
    hangar.processes.get('AgentRegistry')!.kill('SIGTERM');
    expect(await hangar.exits.get('AgentRegistry')).toBe(0);
    const unavailable = await api('GET', '/api/agents/distributed');
    expect(unavailable.status).toBe(503);
    expect(unavailable.body).toMatchObject({ errorType: 'service_unavailable' });
    expect(unavailable.text).not.toMatch(/at .*\.ts:\d+/);
    // Readiness is the gateway's own: taking it out of a load balancer would not bring the registry back.
    const ready = await api('GET', '/readyz', { token: null });
    expect([ready.status, ready.body]).toEqual([200, { status: 'ok' }]);
    expect((await api('GET', '/api/sessions')).status).toBe(200);
    for (const [name, child] of hangar.processes) if (name !== 'AgentRegistry') child.kill('SIGTERM');
    const codes = await Promise.all([...hangar.exits.entries()].map(async ([name, exit]) => [name, await exit]));
    expect(Object.fromEntries(codes)).toEqual(Object.fromEntries([...hangar.processes.keys()].map((name) => [name, 0])));
  });
});

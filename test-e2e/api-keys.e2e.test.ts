import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, type HangarUnderTest } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC Authentication 4 and API.md "API keys": hashed keys shown once, scopes narrowing roles, the key's tenant, revocation at once. */

let hangar: HangarUnderTest;
const tenant = (name: string) => ({ 'x-hangar-tenant': name });

async function createKey(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const created = await hangar.request('POST', '/api/api-keys', { body, headers });
  expect(created.status, created.text).toBe(201);
  return created.body as { id: string; key: string; scopes: string[]; prefix: string };
}

beforeAll(async () => {
  hangar = await startHangar({ modules: allInOneModules(), overrides: { Tenancy: { Enabled: true, AllowHeaderResolution: true } } });
  const created = await hangar.request('POST', '/api/agents', {
    body: { name: 'echo', model: { provider: 'demo', model: 'echo' } },
    headers: tenant('acme'),
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
});

describe('API keys', () => {
  it('are shown once at creation; lists and reads never carry the key; omitted scopes are every scope of the role', async () => {
    const created = await createKey({ name: 'ci', role: 'Reader' }, tenant('acme'));
    expect(created.key).toMatch(/^hgk_[0-9A-Za-z]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    expect(created.scopes).toEqual([
      'AgentsRead',
      'EvalsRead',
      'ExperimentsRead',
      'KnowledgeRead',
      'PlatformRead',
      'RunsRead',
      'SecurityAdmin',
      'WorkflowsRead',
    ]);
    const listed = await hangar.request('GET', '/api/api-keys', { headers: tenant('acme') });
    const read = await hangar.request('GET', `/api/api-keys/${created.id}`, { headers: tenant('acme') });
    for (const text of [listed.text, read.text]) {
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(created.key.slice(12));
    }
    expect(read.body).toMatchObject({ id: created.id, name: 'ci', role: 'Reader', createdBy: 'auth-token', revokedAt: null });
  });

  it('authenticate as Bearer or X-API-Key, in the key’s own tenant whatever the request says', async () => {
    const { key } = await createKey({ name: 'reader', role: 'Reader' }, tenant('acme'));
    const asBearer = await hangar.request('GET', '/api/agents', { token: key, headers: tenant('globex') });
    expect(asBearer.status).toBe(200);
    expect(asBearer.body.map((agent: any) => agent.name)).toContain('echo');
    const asHeader = await hangar.request('GET', '/api/agents/echo', { token: null, headers: { 'x-api-key': key } });
    expect(asHeader.status).toBe(200);
  });

  it('narrow their role with scopes (role ∩ scopes) and attribute runs to their user and labels', async () => {
    const { key } = await createKey(
      { name: 'runner', role: 'Operator', scopes: ['RunsWrite', 'RunsRead'], userId: 'svc-7', labels: { team: 'ml' } },
      tenant('acme'),
    );
    expectProblem(await hangar.request('GET', '/api/agents', { token: key }), 403, 'forbidden');
    const run = await hangar.request('POST', '/api/agents/echo/run', {
      token: key,
      body: { message: 'hi' },
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(run.status, run.text).toBe(200);
    const record = (await hangar.request('GET', `/api/runs/${run.body.runId}`, { headers: tenant('acme') })).body;
    expect(record).toMatchObject({ userId: 'svc-7', labels: { team: 'ml' } });
  });

  it('stop working at once when revoked; a second revoke is 404', async () => {
    const created = await createKey({ name: 'doomed', role: 'Reader' }, tenant('acme'));
    expect((await hangar.request('GET', '/api/agents', { token: created.key })).status).toBe(200);
    expect((await hangar.request('DELETE', `/api/api-keys/${created.id}`, { headers: tenant('acme') })).status).toBe(204);
    expectProblem(await hangar.request('GET', '/api/agents', { token: created.key }), 401, 'unauthorized');
    expectProblem(await hangar.request('DELETE', `/api/api-keys/${created.id}`, { headers: tenant('acme') }), 404, 'not_found');
    expect((await hangar.request('GET', `/api/api-keys/${created.id}`, { headers: tenant('acme') })).body.revokedAt).not.toBeNull();
    const audit = (await hangar.request('GET', '/api/audit?resourceType=api-key', { headers: tenant('acme') })).body;
    expect(audit.map((entry: any) => `${entry.action}:${entry.resourceId}`)).toEqual(
      expect.arrayContaining([`api-key.created:${created.id}`, `api-key.revoked:${created.id}`]),
    );
  });

  it('stop working once expired', async () => {
    const { key } = await createKey({ name: 'brief', role: 'Reader', expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await hangar.request('GET', '/api/agents', { token: key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    expectProblem(await hangar.request('GET', '/api/agents', { token: key }), 401, 'unauthorized');
  });

  it('keep to their tenant: another tenant’s key is a 404 to read or revoke', async () => {
    const created = await createKey({ name: 'acme-only', role: 'Reader' }, tenant('acme'));
    expectProblem(await hangar.request('GET', `/api/api-keys/${created.id}`, { headers: tenant('globex') }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', `/api/api-keys/${created.id}`, { headers: tenant('globex') }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/api-keys', { headers: tenant('globex') })).body).toEqual([]);
  });
});

describe('API keys are capped by their creator', () => {
  it('refuses a key with scopes its creator lacks (403), including the role’s scopes when none are named', async () => {
    const limited = await createKey({ name: 'security-only', role: 'Admin', scopes: ['SecurityAdmin'] }, tenant('acme'));
    const as = { token: limited.key };
    expectProblem(await hangar.request('POST', '/api/api-keys', { ...as, body: { name: 'wider', role: 'Admin' } }), 403, 'forbidden');
    expectProblem(
      await hangar.request('POST', '/api/api-keys', { ...as, body: { name: 'wider', role: 'Reader', scopes: ['RunsRead'] } }),
      403,
      'forbidden',
    );
    const same = await hangar.request('POST', '/api/api-keys', {
      ...as,
      body: { name: 'same', role: 'Reader', scopes: ['SecurityAdmin'] },
    });
    expect(same.status, same.text).toBe(201);
  });
});

describe('API keys, bad input', () => {
  it.each([
    ['a free-text scope', { name: 'x', role: 'Reader', scopes: ['runs:write'] }],
    ['a scope in the wrong case', { name: 'x', role: 'Reader', scopes: ['runsread'] }],
    ['an unknown role', { name: 'x', role: 'Superuser' }],
    ['an expiry in the past', { name: 'x', role: 'Reader', expiresAt: new Date(Date.now() - 1000).toISOString() }],
    ['no name', { role: 'Reader' }],
    ['a label key that is not one', { name: 'x', role: 'Reader', labels: { 'bad key!': 'v' } }],
    ['21 labels', { name: 'x', role: 'Reader', labels: Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`k${index}`, 'v'])) }],
  ])('refuses %s with 400', async (_, body) => {
    expectProblem(await hangar.request('POST', '/api/api-keys', { body }), 400, 'validation_failed');
  });

  it.each([
    ['a malformed key', 'hgk_short'],
    ['a 10 KB key', `hgk_${'a'.repeat(10_000)}`],
    ['a well-formed key nobody issued', `hgk_${'A'.repeat(43)}`],
  ])('refuses %s with 401', async (_, key) => {
    expectProblem(await hangar.request('GET', '/api/agents', { token: key }), 401, 'unauthorized');
    expectProblem(await hangar.request('GET', '/api/agents', { token: null, headers: { 'x-api-key': key } }), 401, 'unauthorized');
  });

  it('answers an id that is not one with 404', async () => {
    expectProblem(await hangar.request('GET', '/api/api-keys/not-a-uuid'), 404, 'not_found');
  });
});

import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Tenants": stored or implicit tenants, managed by the platform tenant; disabled tenants refused everywhere; their own providers. */

let hangar: HangarUnderTest;
let globalMock: MockOpenAI;
let acmeMock: MockOpenAI;
const tenant = (name: string) => ({ 'x-hangar-tenant': name });
const acmeProvider = (apiKeyKey = 'Hangar:ProviderKeys:acme') => ({ kind: 'OpenAICompatible', endpoint: acmeMock.url, apiKeyKey });

beforeAll(async () => {
  [globalMock, acmeMock] = await Promise.all([startMockOpenAI(), startMockOpenAI()]);
  globalMock.script('m', [{ text: 'from the global provider' }]);
  acmeMock.script('m', [{ text: 'from acme’s own provider' }]);
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: globalMock.url, ApiKey: 'sk-global' } },
      Hangar: { ProviderKeys: { acme: 'sk-acme' } },
      // acme's own provider is the mock on http://127.0.0.1: a sidecar, which needs private targets allowed.
      Egress: { AllowPrivateNetworkTargets: true },
    },
  });
  for (const name of ['acme', 'globex', 'zeta']) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name: 'bot', model: { provider: 'mock', model: 'm' } },
      headers: tenant(name),
    });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await hangar?.stop();
  await Promise.all([globalMock?.close(), acmeMock?.close()]);
});

const runAs = async (name: string) =>
  hangar.request('POST', '/api/agents/bot/run', {
    body: { message: 'hi' },
    headers: { ...tenant(name), 'idempotency-key': crypto.randomUUID() },
  });

describe('tenants', () => {
  it('exist implicitly until stored; PUT creates (201) then replaces (200); the list shows stored ones; DELETE forgets', async () => {
    expect((await hangar.request('GET', '/api/tenants/initech')).body).toMatchObject({
      id: 'initech',
      enabled: true,
      providers: {},
      stored: false,
    });
    const created = await hangar.request('PUT', '/api/tenants/initech', { body: { displayName: 'Initech', enabled: true } });
    expect([created.status, created.body]).toMatchObject([201, { id: 'initech', displayName: 'Initech', stored: true }]);
    const replaced = await hangar.request('PUT', '/api/tenants/initech', { body: { displayName: 'Initech Inc', enabled: true } });
    expect([replaced.status, replaced.body.displayName]).toEqual([200, 'Initech Inc']);
    expect((await hangar.request('GET', '/api/tenants')).body.map((each: any) => each.id)).toContain('initech');
    expect((await hangar.request('DELETE', '/api/tenants/initech')).status).toBe(204);
    expectProblem(await hangar.request('DELETE', '/api/tenants/initech'), 404, 'not_found');
    const audit = (await hangar.request('GET', '/api/audit?take=50')).body as any[];
    expect(audit.filter((entry) => entry.resourceId === 'initech').map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['tenant.created', 'tenant.updated', 'tenant.deleted']),
    );
  });

  it('refuse bad input with 400 naming the field, and change nothing', async () => {
    expectProblem(
      await hangar.request('PUT', '/api/tenants/bad%20id', { body: { displayName: 'x', enabled: true } }),
      400,
      'validation_failed',
    );
    const outside = await hangar.request('PUT', '/api/tenants/acme', {
      body: { displayName: 'Acme', enabled: true, providers: { mock: acmeProvider('Secrets:acme') } },
    });
    expectProblem(outside, 400, 'validation_failed');
    expect(outside.text).toContain('providers.mock.apiKeyKey');
    expectProblem(
      await hangar.request('PUT', '/api/tenants/acme', {
        body: {
          displayName: 'Acme',
          enabled: true,
          providers: { mock: { kind: 'OpenAICompatible', apiKeyKey: 'Hangar:ProviderKeys:acme' } },
        },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await hangar.request('PUT', '/api/tenants/acme', {
        body: { displayName: 'Acme', enabled: true, providers: { mock: { ...acmeProvider(), kind: 'Demo' } } },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await hangar.request('PUT', '/api/tenants/default', { body: { displayName: 'Platform', enabled: false } }),
      400,
      'validation_failed',
    );
    // Private targets allowed: plain http: still only reaches a sidecar, never a public host.
    const insecure = await hangar.request('PUT', '/api/tenants/acme', {
      body: { displayName: 'Acme', enabled: true, providers: { mock: { ...acmeProvider(), endpoint: 'http://api.example.com/v1' } } },
    });
    expectProblem(insecure, 400, 'validation_failed');
    expect(insecure.text).toContain('providers.mock.endpoint');
    expect((await hangar.request('GET', '/api/tenants/acme')).body.stored).toBe(false);
  });

  it('are managed only from the platform tenant or with the static token', async () => {
    const key = await hangar.request('POST', '/api/api-keys', { body: { name: 'acme-admin', role: 'Admin' }, headers: tenant('acme') });
    expect(key.status).toBe(201);
    expectProblem(await hangar.request('GET', '/api/tenants', { token: key.body.key }), 403, 'forbidden');
    expectProblem(
      await hangar.request('PUT', '/api/tenants/acme', { token: key.body.key, body: { displayName: 'Mine', enabled: true } }),
      403,
      'forbidden',
    );
    const readOnly = await hangar.request('POST', '/api/api-keys', {
      body: { name: 'platform-reader', role: 'Admin', scopes: ['PlatformRead'] },
    });
    expect((await hangar.request('GET', '/api/tenants', { token: readOnly.body.key })).status).toBe(200);
    expectProblem(
      await hangar.request('PUT', '/api/tenants/zeta', { token: readOnly.body.key, body: { displayName: 'Z', enabled: true } }),
      403,
      'forbidden',
    );
  });

  it('refuses every route of a disabled tenant with 403 tenant_disabled, and serves it again once enabled', async () => {
    const key = await hangar.request('POST', '/api/api-keys', { body: { name: 'zeta-reader', role: 'Reader' }, headers: tenant('zeta') });
    expect((await hangar.request('PUT', '/api/tenants/zeta', { body: { displayName: 'Zeta', enabled: false } })).status).toBe(201);
    for (const [method, path] of [
      ['GET', '/api/agents'],
      ['GET', '/api/agents/bot'],
      ['GET', '/api/runs'],
      ['GET', '/api/sessions'],
      ['GET', '/api/api-keys'],
    ] as const) {
      expectProblem(await hangar.request(method, path, { headers: tenant('zeta') }), 403, 'tenant_disabled');
    }
    expectProblem(await runAs('zeta'), 403, 'tenant_disabled');
    expectProblem(await hangar.request('GET', '/api/agents', { token: key.body.key }), 403, 'tenant_disabled');
    expect((await hangar.request('GET', '/api/agents', { headers: tenant('globex') })).status).toBe(200);
    expect((await hangar.request('PUT', '/api/tenants/zeta', { body: { displayName: 'Zeta', enabled: true } })).status).toBe(200);
    expect((await hangar.request('GET', '/api/agents', { token: key.body.key })).status).toBe(200);
  });

  it('run on their own provider binding where they have one, and on the global provider otherwise', async () => {
    const stored = await hangar.request('PUT', '/api/tenants/acme', {
      body: { displayName: 'Acme', enabled: true, providers: { mock: acmeProvider() } },
    });
    expect(stored.status, stored.text).toBeLessThan(300);
    const acme = await runAs('acme');
    expect([acme.status, acme.body.output?.text]).toEqual([200, 'from acme’s own provider']);
    expect(acmeMock.requests.at(-1)!.headers.authorization).toBe('Bearer sk-acme');
    const globex = await runAs('globex');
    expect([globex.status, globex.body.output?.text]).toEqual([200, 'from the global provider']);
    expect(globalMock.requests.at(-1)!.headers.authorization).toBe('Bearer sk-global');
    // A binding whose key is not configured makes the provider unavailable for that tenant, never the global one.
    await hangar.request('PUT', '/api/tenants/acme', {
      body: { displayName: 'Acme', enabled: true, providers: { mock: acmeProvider('Hangar:ProviderKeys:missing') } },
    });
    const calls = globalMock.requests.length;
    expectProblem(await runAs('acme'), 503, 'provider_unavailable');
    expect(globalMock.requests.length).toBe(calls);
    await hangar.request('DELETE', '/api/tenants/acme');
    expect((await runAs('acme')).body.output?.text).toBe('from the global provider');
  });
});

describe('tenant provider endpoints while private targets are refused (Egress:AllowPrivateNetworkTargets false, the default)', () => {
  let strict: HangarUnderTest;
  beforeAll(async () => {
    strict = await startHangar({ modules: allInOneModules(), overrides: { Hangar: { ProviderKeys: { acme: 'sk-acme' } } } });
  });
  afterAll(async () => {
    await strict?.stop();
  });

  it.each(['http://169.254.169.254/', 'https://10.0.0.1/v1', 'http://localhost:1234', 'the acme mock'])(
    'refuses %s with 400 naming providers.<name>.endpoint',
    async (endpoint) => {
      const answer = await strict.request('PUT', '/api/tenants/acme', {
        body: {
          displayName: 'Acme',
          enabled: true,
          providers: { mock: { ...acmeProvider(), endpoint: endpoint === 'the acme mock' ? acmeMock.url : endpoint } },
        },
      });
      expectProblem(answer, 400, 'validation_failed');
      expect(answer.body.errors).toEqual([
        expect.objectContaining({ path: 'providers.mock.endpoint', message: expect.stringMatching(/private network address/) }),
      ]);
      expect((await strict.request('GET', '/api/tenants/acme')).body.stored).toBe(false);
    },
  );

  it('stores a public https endpoint', async () => {
    const answer = await strict.request('PUT', '/api/tenants/acme', {
      body: { displayName: 'Acme', enabled: true, providers: { mock: { ...acmeProvider(), endpoint: 'https://api.example.com/v1' } } },
    });
    expect(answer.status, answer.text).toBe(201);
  });
});

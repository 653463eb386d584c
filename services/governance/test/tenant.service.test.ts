import { HangarError, type Caller } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import type { TenantRecord, TenantRepository } from '../src/tenants/tenant.repository.js';
import { createTenantService } from '../src/tenants/tenant.service.js';

/** A tenant provider's endpoint is where the platform sends an API key: the egress rule applies when it is saved. */

const CALLER: Caller = { tenantId: 'default', actor: 'test', role: 'Admin' };

function serviceWith(allowPrivateNetworkTargets: boolean) {
  const saved: Array<Omit<TenantRecord, 'createdAt' | 'updatedAt'>> = [];
  const repository = {
    async put(tenant) {
      saved.push(tenant);
      const at = new Date().toISOString();
      return { tenant: { ...tenant, createdAt: at, updatedAt: at }, created: true };
    },
  } as Pick<TenantRepository, 'put'> as TenantRepository;
  const service = createTenantService({
    repository,
    audit: async () => {},
    announceChange: async () => {},
    settings: { platformTenantId: 'default', providerKeyPrefix: 'Hangar:ProviderKeys:', allowPrivateNetworkTargets },
  });
  const putEndpoint = (endpoint: string, kind = 'OpenAICompatible') =>
    service.put(CALLER, {
      id: 'acme',
      displayName: 'Acme',
      enabled: true,
      providers: { mock: { kind, endpoint, apiKeyKey: 'Hangar:ProviderKeys:acme' } },
    });
  return { saved, putEndpoint };
}

/** The field errors of the 400 the save was refused with. */
async function refusal(saving: Promise<unknown>) {
  const error = await saving.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HangarError);
  expect((error as HangarError).status).toBe(400);
  return (error as HangarError).extensions.errors as Array<{ path: string; message: string }>;
}

describe('a tenant provider endpoint', () => {
  it.each(['http://169.254.169.254/', 'https://10.0.0.1/v1', 'http://localhost:1234', 'https://0x7f.1/v1', 'http://[::1]:8080/v1'])(
    'is refused with 400 at providers.<name>.endpoint when it is private: %s',
    async (endpoint) => {
      const { saved, putEndpoint } = serviceWith(false);
      expect(await refusal(putEndpoint(endpoint))).toEqual([
        { path: 'providers.mock.endpoint', message: expect.stringMatching(/is a private network address$/) },
      ]);
      expect(saved).toEqual([]);
    },
  );

  it('needs https: — plain http: to a public target is refused whatever Egress:AllowPrivateNetworkTargets says', async () => {
    for (const allow of [false, true]) {
      const { putEndpoint } = serviceWith(allow);
      expect(await refusal(putEndpoint('http://api.example.com/v1'))).toEqual([
        { path: 'providers.mock.endpoint', message: expect.stringMatching(/^the target must use https:/) },
      ]);
    }
  });

  it('accepts a public https endpoint by default', async () => {
    const { saved, putEndpoint } = serviceWith(false);
    await putEndpoint('https://api.example.com/v1');
    await putEndpoint('https://acme.openai.azure.com', 'AzureOpenAI');
    expect(saved.map((tenant) => tenant.providers.mock.endpoint)).toEqual(['https://api.example.com/v1', 'https://acme.openai.azure.com']);
  });

  it('may be a private target, over plain http: too (a sidecar), while private targets are allowed', async () => {
    const { saved, putEndpoint } = serviceWith(true);
    for (const endpoint of ['http://127.0.0.1:11434/v1', 'http://localhost:1234', 'https://10.0.0.1/v1', 'http://169.254.169.254/'])
      await putEndpoint(endpoint);
    expect(saved).toHaveLength(4);
    expect(await refusal(putEndpoint('http://model-sidecar:8080/v1'))).toEqual([
      { path: 'providers.mock.endpoint', message: expect.stringMatching(/model-sidecar is neither/) },
    ]);
  });

  it('is refused when it is not a URL or carries credentials', async () => {
    const { putEndpoint } = serviceWith(false);
    expect((await refusal(putEndpoint('not a url')))[0].message).toBe('the target is not a valid absolute URL');
    expect((await refusal(putEndpoint('https://user:key@api.example.com/')))[0].message).toMatch(/user name or password/);
  });
});

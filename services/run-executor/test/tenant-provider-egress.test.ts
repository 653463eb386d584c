import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuardedFetch, type GuardedFetch } from '@hangar/platform';
import { startMockOpenAI, type MockOpenAI } from '@hangar/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TenantProvider } from '../src/clients/ports.js';
import { createConcurrencyLimiter } from '../src/providers/circuit-breaker.js';
import { createModelResolver } from '../src/providers/model-providers.js';
import { CALLER, createHarness } from './engine-harness.js';

/**
 * A tenant's own provider binding reaches its endpoint only through the egress-guarded fetch: a name
 * that resolves to a private address is refused on connection (the run fails with the refusal, the
 * upstream sees nothing, nothing is retried), while the operator's global providers are not guarded.
 */

let upstream: MockOpenAI;
/** The upstream (a mock OpenAI server on 127.0.0.1) stands behind this name, known only to the injected resolver. */
const NAME = 'models.tenant.test';
const lookups: string[] = [];
const fetches: GuardedFetch[] = [];

beforeAll(async () => {
  upstream = await startMockOpenAI();
  upstream.script('m', [{ text: 'one two three', chunkDelayMs: 150 }]);
});
afterEach(async () => {
  await Promise.all(fetches.splice(0).map((guarded) => guarded.close()));
});
afterAll(() => upstream.close());

const port = () => new URL(upstream.url).port;
const binding = (endpoint: string): Record<string, TenantProvider> => ({
  mock: { kind: 'OpenAICompatible', endpoint, apiKeyKey: 'Hangar:ProviderKeys:acme' },
});

/** The engine with the real model resolver, wired as the module wires it, but resolving NAME to loopback. */
function harnessWith(options: { allowPrivateNetworkTargets: boolean; providers: Record<string, TenantProvider> }) {
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    if (hostname !== NAME) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address: '127.0.0.1', family: 4 as const }];
  };
  return createHarness({
    agent: { model: { provider: 'mock', model: 'm' } },
    config: {
      // The global provider of the same name, the operator's, on the loopback upstream; its retries apply to the tenant's binding too.
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: upstream.url, ApiKey: 'sk-global', MaxRetries: 3 } },
      Hangar: { ProviderKeys: { acme: 'sk-acme' } },
      Egress: { AllowPrivateNetworkTargets: options.allowPrivateNetworkTargets },
    },
    tenantSettings: async () => ({ enabled: true, providers: options.providers }),
    modelResolver: (config) => {
      const guarded = createGuardedFetch({ allowPrivateNetworkTargets: config.Egress.AllowPrivateNetworkTargets, resolve });
      fetches.push(guarded);
      return createModelResolver(config, createConcurrencyLimiter(4), { tenant: guarded.fetch, operator: fetch });
    },
  });
}

describe('a tenant provider endpoint while private targets are refused', () => {
  it.each(['https', 'http'])('fails the run with the refusal when its name resolves to a private address (%s:)', async (scheme) => {
    const harness = harnessWith({ allowPrivateNetworkTargets: false, providers: binding(`${scheme}://${NAME}:${port()}/v1`) });
    const requests = upstream.requests.length;
    const before = lookups.length;
    const { run, updates } = await harness.run();
    expect(run).toMatchObject({
      status: 'Failed',
      errorType: 'provider_unavailable',
      errorMessage: `mock/m: refused by the egress guard: the target ${NAME} resolves to 127.0.0.1, a private network address`,
    });
    expect(updates.at(-1)).toMatchObject({ type: 'failed', errorType: 'provider_unavailable' });
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.failed');
    // Asked once: a refusal is not a network failure the SDK retries (MaxRetries is 3).
    expect(lookups.slice(before)).toEqual([NAME]);
    expect(upstream.requests.length).toBe(requests);
  });

  it('fails the run when the endpoint is a private IP literal, without a lookup or a connection', async () => {
    const harness = harnessWith({ allowPrivateNetworkTargets: false, providers: binding(upstream.url) });
    const requests = upstream.requests.length;
    const before = lookups.length;
    const { run } = await harness.run();
    expect(run).toMatchObject({ status: 'Failed', errorType: 'provider_unavailable' });
    expect(run.errorMessage).toBe('mock/m: refused by the egress guard: the target 127.0.0.1 is a private network address');
    expect(lookups.length).toBe(before);
    expect(upstream.requests.length).toBe(requests);
  });

  it('leaves the global provider alone: the operator may run a model on a private network', async () => {
    const harness = harnessWith({ allowPrivateNetworkTargets: false, providers: {} });
    const { run, text } = await harness.run();
    expect([run.status, text]).toEqual(['Completed', 'one two three']);
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-global');
  });
});

describe('a tenant provider endpoint while private targets are allowed (a sidecar)', () => {
  it('is reached through the guarded fetch, with the tenant’s key, and its answer streams', async () => {
    const harness = harnessWith({ allowPrivateNetworkTargets: true, providers: binding(`http://${NAME}:${port()}/v1`) });
    const before = lookups.length;
    const deltas: number[] = [];
    let text = '';
    for await (const update of harness.engine.start(
      CALLER,
      { agentName: 'assistant', messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: true, attachments: [] },
      new AbortController().signal,
    )) {
      if (update.type !== 'text-delta') continue;
      deltas.push(Date.now());
      text += update.text;
    }
    expect(text).toBe('one two three');
    expect(lookups.slice(before)).toEqual([NAME]);
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-acme');
    // The upstream writes a word every 150 ms: a buffered body would hand over all three at once.
    expect(deltas).toHaveLength(3);
    expect(deltas[2] - deltas[0]).toBeGreaterThanOrEqual(150);
  });
});

describe('a provider that refuses connections', () => {
  it('is a provider failure, so the fallback answers (not a store outage that fails the run)', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const harness = createHarness({
      agent: { model: { provider: 'gone', model: 'm', fallbacks: [{ provider: 'mock', model: 'm' }] } },
      config: {
        Providers: {
          gone: { Kind: 'OpenAICompatible', Endpoint: `http://127.0.0.1:${closed}/v1`, MaxRetries: 0 },
          mock: { Kind: 'OpenAICompatible', Endpoint: upstream.url },
        },
      },
      modelResolver: (config) => createModelResolver(config, createConcurrencyLimiter(4), { tenant: fetch, operator: fetch }),
    });
    const { run } = await harness.run();
    expect(run).toMatchObject({ status: 'Completed', modelProvider: 'mock' });
  });
});

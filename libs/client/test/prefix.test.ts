import { describe, expect, it } from 'vitest';
import { createHangarClient } from '../src/index.js';

/** Where each call goes: Hangar:Api:Prefix before the routes that move with it, none before the others. */
describe('the client’s prefix', () => {
  it('goes before /api/ and /v1/ routes, with or without path parameters, and not before /healthz or /metrics', async () => {
    const urls: string[] = [];
    const client = createHangarClient({
      baseUrl: 'http://gateway.test/',
      prefix: '/hangar',
      token: 't',
      retry: false,
      fetch: async (request: Request) => {
        urls.push(request.url);
        return new Response(JSON.stringify([]), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    await client.agents.list();
    await client.agents.get('bot');
    await client.runs.list({ query: { status: 'Running' } });
    await client.openAiCompatible.listModels();
    await client.meta.liveness();
    await client.meta.readiness();
    expect(urls).toEqual([
      'http://gateway.test/hangar/api/agents',
      'http://gateway.test/hangar/api/agents/bot',
      'http://gateway.test/hangar/api/runs?status=Running',
      'http://gateway.test/hangar/v1/models',
      'http://gateway.test/healthz',
      'http://gateway.test/readyz',
    ]);
  });
});

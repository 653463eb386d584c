import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { httpRequest, startHangar, startPrivateRedis, TEST_REDIS_URL, type HangarUnderTest } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, describe, expect, it } from 'vitest';

/** API.md "Rate limiting": fixed windows per partition, RateLimit-* headers, 429 with Retry-After, a queue, one counter across gateways. */

const started: HangarUnderTest[] = [];
async function hangarWith(rateLimit: Record<string, unknown>, more: Record<string, unknown> = {}) {
  const hangar = await startHangar({
    modules: allInOneModules(),
    overrides: { RateLimit: { Enabled: true, ...rateLimit }, Tenancy: { Enabled: true, AllowHeaderResolution: true }, ...more },
  });
  started.push(hangar);
  return hangar;
}

afterAll(async () => {
  for (const hangar of started.reverse()) await hangar.stop();
});

describe('rate limiting', () => {
  it('counts a window per tenant: headers on every answer, then 429 rate_limited with Retry-After; meta and probes are not limited', async () => {
    const hangar = await hangarWith({ PermitLimit: 3, Window: '10s' });
    const answers = [];
    for (let index = 0; index < 3; index++)
      answers.push(await hangar.request('GET', '/api/agents', { headers: { 'x-hangar-tenant': 'acme' } }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0']);
    expect(answers[0].headers.get('ratelimit-limit')).toBe('3');
    expect(Number(answers[0].headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    const refused = await hangar.request('GET', '/api/agents', { headers: { 'x-hangar-tenant': 'acme' } });
    expectProblem(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another tenant has a window of its own; unauthenticated routes are never counted.
    expect((await hangar.request('GET', '/api/agents', { headers: { 'x-hangar-tenant': 'globex' } })).status).toBe(200);
    for (const path of ['/api/meta', '/healthz', '/readyz']) expect((await hangar.request('GET', path, { token: null })).status).toBe(200);
  });

  it('lets QueueLimit requests over the limit wait for the next window instead of failing', async () => {
    const hangar = await hangarWith({ PermitLimit: 2, Window: '1s', QueueLimit: 1 });
    // The queue is the gateway's that holds the requests (docs/decisions.md): one gateway's.
    const call = () => httpRequest(hangar.url, 'GET', '/api/agents');
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const startedAt = performance.now();
    const [queued, refused] = await Promise.all([call(), new Promise((resolve) => setTimeout(resolve, 50)).then(call)]);
    expect(queued.status).toBe(200);
    expect(performance.now() - startedAt).toBeGreaterThan(200);
    expectProblem(refused, 429, 'rate_limited');
  });

  it('shares one counter across gateways through Redis: PermitLimit 10 across both, the 11th is 429 whichever gateway gets it', async () => {
    const shared = { Redis: { ConnectionString: TEST_REDIS_URL, ChannelPrefix: `t_${randomBytes(5).toString('hex')}:` } };
    const first = await hangarWith({ PermitLimit: 10, Window: '30s' }, shared);
    // The split shape's second gateway when it runs two, else a second Hangar on the same Redis.
    const gateways = first.urls.length > 1 ? first.urls : [first.url, (await hangarWith({ PermitLimit: 10, Window: '30s' }, shared)).url];
    const call = (gateway: string) => httpRequest(gateway, 'GET', '/api/agents');
    const statuses = [];
    for (let index = 0; index < 10; index++) statuses.push((await call(gateways[index % 2])).status);
    expect(statuses).toEqual(Array(10).fill(200));
    expectProblem(await call(gateways[0]), 429, 'rate_limited');
    expectProblem(await call(gateways[1]), 429, 'rate_limited');
  });

  it('lets requests through uncounted while its Redis is away (no 5xx), and counts again once Redis is back', async () => {
    const redis = await startPrivateRedis();
    try {
      const hangar = await hangarWith({ PermitLimit: 3, Window: '30s' }, { Redis: { ConnectionString: redis.url } });
      // One gateway throughout: each reconnects to Redis on its own.
      const call = () => httpRequest(hangar.url, 'GET', '/api/agents');
      expect((await call()).headers.get('ratelimit-remaining')).toBe('2');
      await redis.kill9();
      const during = [];
      for (let index = 0; index < 5; index++) during.push(await call());
      expect(during.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
      expect(during.map((answer) => answer.headers.get('ratelimit-remaining'))).toEqual([null, null, null, null, null]);
      await redis.start();
      const counted = async () => (await call()).headers.get('ratelimit-remaining');
      // The client reconnects by itself (backoff up to 2 s); a fresh Redis has forgotten the window.
      const deadline = Date.now() + 10_000;
      let remaining = await counted();
      while (remaining === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        remaining = await counted();
      }
      expect(remaining).toBe('2');
      expect(await counted()).toBe('1');
      expect(await counted()).toBe('0');
      expectProblem(await call(), 429, 'rate_limited');
    } finally {
      await redis.stop();
    }
  });
});

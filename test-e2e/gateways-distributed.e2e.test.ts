import { randomBytes } from 'node:crypto';
import { httpRequest, startDistributed, TEST_REDIS_URL, type DistributedHangar } from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The distributed shape with two gateway processes in front of the services, on PostgreSQL and
 * Redis: what one gateway is told (a key revoked, a tenant disabled) the other acts on within the
 * window measured here, and one rate-limit counter serves both.
 */
let hangar: DistributedHangar;
const tenant = { 'x-hangar-tenant': 'acme' };

beforeAll(async () => {
  hangar = await startDistributed({
    gateways: 2,
    env: {
      HANGAR__Redis__ConnectionString: TEST_REDIS_URL,
      HANGAR__Redis__ChannelPrefix: `t_${randomBytes(5).toString('hex')}:`,
      HANGAR__Tenancy__Enabled: 'true',
      HANGAR__Tenancy__AllowHeaderResolution: 'true',
      HANGAR__RateLimit__Enabled: 'true',
      HANGAR__RateLimit__PermitLimit: '10',
      HANGAR__RateLimit__Window: '30s',
      HANGAR__RateLimit__Partition: 'ApiKey',
    },
  });
}, 120_000);

afterAll(async () => {
  await hangar?.cleanup();
});

const [A, B] = [0, 1];
const via = (gateway: number, method: string, path: string, options?: Parameters<typeof httpRequest>[3]) =>
  httpRequest(hangar.urls[gateway], method, path, options);

/** Milliseconds until gateway B answers `path` with `status` for `key`; NaN when it never does within a second. */
async function untilB(key: string, status: number) {
  const started = performance.now();
  while (performance.now() - started < 1000) {
    if ((await via(B, 'GET', '/api/agents', { token: key })).status === status) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Number.NaN;
}

it('refuses on gateway B a key revoked through gateway A, and a tenant disabled through A, though B had both cached', async () => {
  const created = await via(A, 'POST', '/api/api-keys', { body: { name: 'shared', role: 'Reader' }, headers: tenant });
  expect(created.status, created.text).toBe(201);
  const key = created.body.key as string;
  expect((await via(B, 'GET', '/api/agents', { token: key })).status).toBe(200);

  expect((await via(A, 'PUT', '/api/tenants/acme', { body: { displayName: 'Acme', enabled: false } })).status).toBe(201);
  const disabledAfterMs = await untilB(key, 403);
  expect((await via(B, 'GET', '/api/agents', { token: key })).body).toMatchObject({ errorType: 'tenant_disabled' });
  expect((await via(A, 'PUT', '/api/tenants/acme', { body: { displayName: 'Acme', enabled: true } })).status).toBe(200);
  const enabledAfterMs = await untilB(key, 200);

  expect((await via(A, 'DELETE', `/api/api-keys/${created.body.id}`, { headers: tenant })).status).toBe(204);
  const revokedAfterMs = await untilB(key, 401);
  console.log(
    `two gateway processes: B refused a disabled tenant ${disabledAfterMs.toFixed(1)} ms, served it again ${enabledAfterMs.toFixed(1)} ms, ` +
      `refused a revoked key ${revokedAfterMs.toFixed(1)} ms after A answered`,
  );
  expect([disabledAfterMs, enabledAfterMs, revokedAfterMs].every((ms) => ms < 1000)).toBe(true);
});

it('counts one rate limit across both gateway processes: PermitLimit 10 across both, the 11th is 429', async () => {
  const created = await via(A, 'POST', '/api/api-keys', { body: { name: 'limited', role: 'Reader' } });
  const key = created.body.key as string;
  const statuses: number[] = [];
  for (let request = 0; request < 11; request++) statuses.push((await via(request % 2, 'GET', '/api/agents', { token: key })).status);
  expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
  expect(statuses[10]).toBe(429);
});

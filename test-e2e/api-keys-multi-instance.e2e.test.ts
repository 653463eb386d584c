import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, TEST_REDIS_URL, type HangarUnderTest } from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * Two instances on one PostgreSQL and Redis: a key revoked, or a tenant disabled, through A is refused
 * by B, which had it cached, within the window measured here.
 */

let first: HangarUnderTest;
let second: HangarUnderTest;

beforeAll(async () => {
  const shared = {
    Redis: { ConnectionString: TEST_REDIS_URL, ChannelPrefix: `t_${randomBytes(5).toString('hex')}:` },
    Tenancy: { Enabled: true, AllowHeaderResolution: true },
  };
  first = await startHangar({ engine: 'postgres', modules: allInOneModules(), overrides: shared });
  second = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    overrides: { ...shared, Stores: { Postgres: { SchemaName: first.config.Stores.Postgres.SchemaName } } },
  });
});

afterAll(async () => {
  await second?.stop();
  await first?.stop();
});

it('a key revoked through gateway A is refused by gateway B within a second, though B had it cached', async () => {
  const created = await first.request('POST', '/api/api-keys', { body: { name: 'shared', role: 'Reader' } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.key as string;
  // B looks the key up once and caches it (for 30 s without an announcement).
  expect((await second.request('GET', '/api/agents', { token: key })).status).toBe(200);
  expect((await second.request('GET', '/api/agents', { token: key })).status).toBe(200);

  const revokedAt = performance.now();
  expect((await first.request('DELETE', `/api/api-keys/${created.body.id}`)).status).toBe(204);
  const answeredAt = performance.now();
  let refusedAfterMs = Number.NaN;
  for (let attempt = 0; attempt < 200; attempt++) {
    if ((await second.request('GET', '/api/agents', { token: key })).status === 401) {
      refusedAfterMs = performance.now() - revokedAt;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  console.log(
    `API key revocation: refused by the other gateway ${refusedAfterMs.toFixed(1)} ms after the revoke was sent, ` +
      `${(refusedAfterMs - (answeredAt - revokedAt)).toFixed(1)} ms after it was answered`,
  );
  expect(refusedAfterMs).toBeLessThan(1000);
});

it('a tenant disabled through gateway A is refused by gateway B within a second, though B had it cached, and served again once enabled', async () => {
  const tenant = { 'x-hangar-tenant': 'shared-tenant' };
  const created = await first.request('POST', '/api/api-keys', { body: { name: 'tenant-key', role: 'Reader' }, headers: tenant });
  const key = created.body.key as string;
  expect((await second.request('GET', '/api/agents', { token: key })).status).toBe(200);
  const refusedWithin = async (status: number) => {
    const started = performance.now();
    for (let attempt = 0; attempt < 200; attempt++) {
      if ((await second.request('GET', '/api/agents', { token: key })).status === status) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return Number.NaN;
  };
  expect((await first.request('PUT', '/api/tenants/shared-tenant', { body: { displayName: 'Shared', enabled: false } })).status).toBe(201);
  const disabledAfterMs = await refusedWithin(403);
  expect((await second.request('GET', '/api/agents', { token: key })).body).toMatchObject({ errorType: 'tenant_disabled' });
  expect((await first.request('PUT', '/api/tenants/shared-tenant', { body: { displayName: 'Shared', enabled: true } })).status).toBe(200);
  const enabledAfterMs = await refusedWithin(200);
  console.log(
    `tenant change: seen by the other gateway ${disabledAfterMs.toFixed(1)} ms (disable), ${enabledAfterMs.toFixed(1)} ms (enable) after it was answered`,
  );
  expect(disabledAfterMs).toBeLessThan(1000);
  expect(enabledAfterMs).toBeLessThan(1000);
});

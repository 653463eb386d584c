import { governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenantRepository } from '../src/tenants/tenant.repository.js';

/** Stored tenants on both engines: an upsert that tells created from replaced, providers kept as given. */
describe.each(SQL_ENGINES)('tenant repository on %s', (engine) => {
  let fixture: EngineFixture;
  let tenants: ReturnType<typeof createTenantRepository>;
  const providers = { mock: { kind: 'OpenAICompatible', endpoint: 'http://127.0.0.1:9/v1', apiKeyKey: 'Hangar:ProviderKeys:acme' } };

  beforeAll(async () => {
    fixture = await openEngine(engine);
    tenants = createTenantRepository((await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations)).db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates, then replaces, a tenant and tells which; lists stored tenants by id; forgets a deleted one', async () => {
    const created = await tenants.put({ id: 'acme', displayName: 'Acme', enabled: true, providers });
    expect(created).toMatchObject({ created: true, tenant: { id: 'acme', displayName: 'Acme', enabled: true, providers } });
    const replaced = await tenants.put({ id: 'acme', displayName: 'Acme Corp', enabled: false, providers: {} });
    expect(replaced).toMatchObject({ created: false, tenant: { displayName: 'Acme Corp', enabled: false, providers: {} } });
    expect(replaced.tenant.createdAt).toBe(created.tenant.createdAt);
    expect(Date.parse(replaced.tenant.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.tenant.updatedAt));
    await tenants.put({ id: 'beta', displayName: 'Beta', enabled: true, providers: {} });
    expect((await tenants.list()).map((tenant) => tenant.id)).toEqual(['acme', 'beta']);
    expect(await tenants.get('acme')).toMatchObject({ enabled: false });
    expect(await tenants.delete('acme')).toBe(true);
    expect(await tenants.delete('acme')).toBe(false);
    expect(await tenants.get('acme')).toBeUndefined();
  });
});

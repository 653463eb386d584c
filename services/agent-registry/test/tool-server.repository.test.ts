import { registryMigrations, type RegistryDatabase } from '@hangar/agent-registry';
import { sql, type Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolServerInput } from '../src/tool-servers/tool-server.model.js';
import { createToolServerRepository, type ToolServerRepository } from '../src/tool-servers/tool-server.repository.js';

const input = (overrides: Partial<ToolServerInput> = {}): ToolServerInput => ({
  url: 'https://tools.example.com/mcp',
  transport: 'streamable-http',
  headers: { 'x-team': 'billing' },
  secretKey: null,
  enabled: true,
  ...overrides,
});
const tool = (name: string) => ({ name, description: `does ${name}`, inputSchema: { type: 'object', properties: {} } });

/** Tool servers on both engines: saves per tenant, discoveries recorded only for the settings they used, refresh claims. */
describe.each(SQL_ENGINES)('tool server repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<RegistryDatabase>;
  let servers: ToolServerRepository;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<RegistryDatabase>('registry', registryMigrations)).db;
    servers = createToolServerRepository(db);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('creates, replaces (forgetting discovered tools) and deletes per tenant', async () => {
    const first = await servers.put('t1', 'kept', input(), null);
    expect(first).toMatchObject({
      created: true,
      toolServer: { status: 'Pending', tools: [], headers: { 'x-team': 'billing' } },
    });
    const note = { uri: 'notes://a', name: 'a', description: 'A note', mimeType: 'text/plain' };
    await servers.recordDiscovery('t1', 'kept', first.toolServer.generation, { ok: true, tools: [tool('add')], resources: [note] });
    expect(await servers.get('t1', 'kept')).toMatchObject({ tools: [tool('add')], resources: [note] });

    const replaced = await servers.put('t1', 'kept', input({ transport: 'sse', enabled: false }), null);
    expect(replaced).toMatchObject({
      created: false,
      toolServer: { status: 'Disabled', tools: [], resources: [], transport: 'sse', refreshedAt: null },
    });
    expect(replaced.toolServer.generation).not.toBe(first.toolServer.generation);
    expect(await servers.get('t2', 'kept')).toBeUndefined();
    expect((await servers.list('t1')).map((server) => server.name)).toEqual(['kept']);
    expect(await servers.delete('t2', 'kept')).toBe(false);
    expect(await servers.delete('t1', 'kept')).toBe(true);
    expect(await servers.get('t1', 'kept')).toBeUndefined();
  });

  it('records a discovery only for the settings it used, and a failure keeps the tools found before', async () => {
    const { generation } = (await servers.put('t1', 'raced', input(), null)).toolServer;
    expect(
      await servers.recordDiscovery('t1', 'raced', generation, { ok: true, tools: [tool('a'), tool('b')], resources: [] }),
    ).toMatchObject({
      status: 'Ready',
      error: null,
    });
    const failed = await servers.recordDiscovery('t1', 'raced', generation, { ok: false, error: 'connection refused' });
    expect(failed).toMatchObject({ status: 'Failed', error: 'connection refused', tools: [tool('a'), tool('b')] });
    expect(failed?.refreshedAt).toBeInstanceOf(Date);

    const second = (await servers.put('t1', 'raced', input({ url: 'https://other.example.com/mcp' }), null)).toolServer;
    // A discovery of the first settings that finishes after the second save is not recorded.
    expect(await servers.recordDiscovery('t1', 'raced', generation, { ok: true, tools: [tool('stale')], resources: [] })).toBeUndefined();
    expect(await servers.get('t1', 'raced')).toMatchObject({ status: 'Pending', tools: [] });
    // Nor one that finishes after the server was deleted and made again under the same name.
    await servers.delete('t1', 'raced');
    await servers.put('t1', 'raced', input({ url: 'https://third.example.com/mcp' }), null);
    expect(
      await servers.recordDiscovery('t1', 'raced', second.generation, { ok: true, tools: [tool('stale')], resources: [] }),
    ).toBeUndefined();
    // Nor on a server disabled meanwhile.
    const disabled = (await servers.put('t1', 'raced', input({ enabled: false }), null)).toolServer;
    expect(
      await servers.recordDiscovery('t1', 'raced', disabled.generation, { ok: true, tools: [tool('late')], resources: [] }),
    ).toBeUndefined();
  });

  it('claims enabled servers whose tools are due, each once until its claim lapses', async () => {
    await db.deleteFrom('tool_servers').execute();
    const never = (await servers.put('t1', 'never-discovered', input(), null)).toolServer;
    const fresh = (await servers.put('t2', 'fresh', input(), null)).toolServer;
    await servers.recordDiscovery('t2', 'fresh', fresh.generation, { ok: true, tools: [], resources: [] });
    const stale = (await servers.put('t2', 'stale', input(), null)).toolServer;
    await servers.recordDiscovery('t2', 'stale', stale.generation, { ok: true, tools: [], resources: [] });
    await db
      .updateTable('tool_servers')
      .set({ refreshed_at: sql<Date>`now() - interval '1 hour'` })
      .where('name', '=', 'stale')
      .execute();
    await servers.put('t1', 'off', input({ enabled: false }), null);
    // A save that discovers the server itself holds it meanwhile.
    await servers.put('t3', 'being-saved', input(), 30_000);

    const claimed = await servers.claimDue(60_000, 30_000, 10);
    expect(claimed.map((server) => `${server.tenantId}/${server.name}`).sort()).toEqual(['t1/never-discovered', 't2/stale']);
    // A second instance finds them claimed.
    expect(await servers.claimDue(60_000, 30_000, 10)).toEqual([]);
    // A claim that lapsed (its instance died mid-discovery) is taken again; a recorded discovery ends a claim.
    await db
      .updateTable('tool_servers')
      .set({ refresh_claimed_until: sql<Date>`now() - interval '1 second'` })
      .where('name', '=', 'stale')
      .execute();
    expect((await servers.claimDue(60_000, 30_000, 10)).map((server) => server.name)).toEqual(['stale']);
    expect((await servers.claimDue(60_000, 30_000, 1)).length).toBe(0);
    await servers.recordDiscovery('t1', 'never-discovered', never.generation, { ok: true, tools: [], resources: [] });
    // At interval 0 every enabled server not claimed is due.
    expect((await servers.claimDue(0, 30_000, 10)).map((server) => server.name).sort()).toEqual(['fresh', 'never-discovered']);
  });
});

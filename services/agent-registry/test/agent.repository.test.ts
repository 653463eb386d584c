import { createAgentRepository, registryMigrations, type AgentRepository, type RegistryDatabase } from '@hangar/agent-registry';
import type { AgentDefinition } from '@hangar/contracts';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const definition = (name: string, overrides: Partial<AgentDefinition> = {}): AgentDefinition => ({
  name,
  description: null,
  instructions: `You are ${name}`,
  model: { provider: 'demo', model: 'echo', fallbacks: [], providerSettings: { temperature: 0.5 } },
  tools: [],
  skills: [],
  agents: [],
  responseFormat: { kind: 'Text' },
  parameters: [],
  ...overrides,
});

describe.each(SQL_ENGINES)('agent repository on %s', (engine) => {
  let fixture: EngineFixture;
  let repository: AgentRepository;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    const database = await fixture.storage.open<RegistryDatabase>('registry', registryMigrations);
    repository = createAgentRepository(database.db, { outbox: true });
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('stores version 1 and refuses a second insert of the same name without writing', async () => {
    const created = (await repository.insertFirst('t1', definition('alpha'), 'alice'))?.result;
    expect(created).toMatchObject({ version: 1, createdBy: 'alice', definition: definition('alpha') });
    expect(await repository.insertFirst('t1', definition('alpha', { instructions: 'other' }), 'bob')).toBeUndefined();
    expect((await repository.getCurrent('t1', 'alpha'))?.definition.instructions).toBe('You are alpha');
  });

  it('round-trips the definition JSON exactly (arrays stay arrays, nested objects intact)', async () => {
    const rich = definition('rich', {
      tools: ['clock', 'mcp:x/y'],
      parameters: [{ name: 'p', description: null, required: true }],
      responseFormat: {
        kind: 'JsonSchema',
        schema: { type: 'object', required: ['a'], properties: { a: { type: 'array', items: { type: 'number' } } } },
      },
    });
    await repository.insertFirst('t1', rich, 'alice');
    expect((await repository.getCurrent('t1', 'rich'))?.definition).toEqual(rich);
  });

  it('appends versions in order and serves them newest first', async () => {
    await repository.appendVersion('t1', definition('alpha', { instructions: 'v2' }), 'bob');
    await repository.appendVersion('t1', definition('alpha', { instructions: 'v3' }), 'carol');
    const versions = await repository.listVersions('t1', 'alpha');
    expect(versions.map((version) => [version.version, version.definition.instructions, version.createdBy])).toEqual([
      [3, 'v3', 'carol'],
      [2, 'v2', 'bob'],
      [1, 'You are alpha', 'alice'],
    ]);
    const current = await repository.getCurrent('t1', 'alpha');
    expect(current?.version).toBe(3);
    expect(Date.parse(current!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(versions[2].createdAt));
  });

  it('gives concurrent appends distinct consecutive versions', async () => {
    await repository.insertFirst('t1', definition('busy'), 'alice');
    await Promise.all(
      Array.from({ length: 8 }, (_, index) => repository.appendVersion('t1', definition('busy', { instructions: `c${index}` }), 'writer')),
    );
    const versions = (await repository.listVersions('t1', 'busy')).map((version) => version.version);
    expect(versions).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('does not append to an agent that does not exist', async () => {
    expect(await repository.appendVersion('t1', definition('ghost'), 'bob')).toBeUndefined();
    expect(await repository.listVersions('t1', 'ghost')).toEqual([]);
  });

  it('reads selected versions', async () => {
    const found = await repository.getVersions('t1', 'alpha', [1, 3, 7]);
    expect([...found.keys()].sort()).toEqual([1, 3]);
    expect(found.get(3)?.definition.instructions).toBe('v3');
  });

  it('isolates tenants', async () => {
    await repository.insertFirst('t2', definition('alpha', { instructions: 'tenant two' }), 'dave');
    expect((await repository.getCurrent('t2', 'alpha'))?.definition.instructions).toBe('tenant two');
    expect((await repository.getCurrent('t1', 'alpha'))?.version).toBe(3);
    expect((await repository.listCurrent('t2')).map((agent) => agent.definition.name)).toEqual(['alpha']);
    expect(await repository.delete('t2', 'rich')).toBeUndefined();
  });

  it('lists current versions ordered by name and exposes call edges', async () => {
    await repository.insertFirst('t1', definition('caller', { agents: ['alpha', 'rich'] }), 'erin');
    const names = (await repository.listCurrent('t1')).map((agent) => agent.definition.name);
    expect(names).toEqual(['alpha', 'busy', 'caller', 'rich']);
    const edges = await repository.callEdges('t1');
    expect(edges.get('caller')).toEqual(['alpha', 'rich']);
    expect(edges.get('alpha')).toEqual([]);
  });

  it('deletes an agent with all its versions, once', async () => {
    expect(await repository.delete('t1', 'alpha')).toMatchObject({ change: { type: 'agent.deleted', name: 'alpha' } });
    expect(await repository.getCurrent('t1', 'alpha')).toBeUndefined();
    expect(await repository.listVersions('t1', 'alpha')).toEqual([]);
    expect(await repository.delete('t1', 'alpha')).toBeUndefined();
    expect(await repository.exists('t1', 'alpha')).toBe(false);
    expect((await repository.insertFirst('t1', definition('alpha'), 'alice'))?.result.version).toBe(1);
  });

  it('queues every change in the outbox with its write, and ships them in order, once', async () => {
    const drain = async () => {
      const shipped: Array<{ key: string; change: Record<string, unknown> }> = [];
      while (
        (await repository.shipOutbox({ owner: 'relay', limit: 100, leaseMs: 30_000 }, async (records) => {
          shipped.push(...records.map((record) => ({ key: record.key, change: JSON.parse(record.value) })));
        })) > 0
      );
      return shipped;
    };
    await drain();
    await repository.insertFirst('t3', definition('omega'), 'alice');
    expect(await repository.insertFirst('t3', definition('omega'), 'alice')).toBeUndefined();
    await repository.appendVersion('t3', definition('omega', { instructions: 'v2' }), 'bob');
    expect(await repository.appendVersion('t3', definition('nobody'), 'bob')).toBeUndefined();
    const deleted = await repository.delete('t3', 'omega');
    const shipped = await drain();
    expect(shipped.map(({ key, change }) => [key, change.type, change.version])).toEqual([
      ['t3/omega', 'agent.created', 1],
      ['t3/omega', 'agent.updated', 2],
      ['t3/omega', 'agent.deleted', 2],
    ]);
    expect(shipped[2].change).toEqual(deleted?.change);
    expect(new Set(shipped.map(({ change }) => change.id)).size).toBe(3);
    expect(await drain()).toEqual([]);
  });
});

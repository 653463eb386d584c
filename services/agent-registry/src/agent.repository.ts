import { randomUUID } from 'node:crypto';
import type { AgentChange, AgentDefinition, AgentDefinitionRecord } from '@hangar/contracts';
import type { ShipOutbox } from '@hangar/messaging';
import { jsonb, shipOutbox, sql, type Generated, type Kysely, type OutboxTables, type Transaction } from '@hangar/storage';
import type { ToolServerTable } from './tool-servers/tool-server.repository.js';

interface AgentsTable {
  tenant_id: string;
  name: string;
  current_version: number;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

interface AgentVersionsTable {
  tenant_id: string;
  name: string;
  version: number;
  definition: AgentDefinition;
  created_at: Generated<Date>;
  created_by: string;
}

interface AgentChangeOutboxTable {
  id: Generated<string>;
  agent_key: string;
  payload: AgentChange;
}

export interface RegistryDatabase {
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  agent_change_outbox: AgentChangeOutboxTable;
  tool_servers: ToolServerTable;
}

/** Agent changes on their way to the event log, keyed by tenant and name so one agent's changes keep their order. */
export const AGENT_CHANGE_OUTBOX: OutboxTables = {
  outbox: 'agent_change_outbox',
  lease: 'agent_change_outbox_lease',
  keyColumn: 'agent_key',
};

/** A write and the change it announces (already in the outbox, when there is one). */
export interface Changed<T> {
  result: T;
  change: AgentChange;
}

export interface StoredAgent extends Required<AgentDefinitionRecord> {
  updatedAt: string;
}

type VersionRow = Pick<AgentVersionsTable, 'definition' | 'version' | 'created_by'> & { created_at: Date };

const toRecord = (row: VersionRow): Required<AgentDefinitionRecord> => ({
  definition: row.definition,
  version: row.version,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
});

/**
 * Every SQL statement of the agent registry. With `outbox` (a durable event log), each write also
 * queues the change it makes in `agent_change_outbox`, in the same transaction.
 */
export function createAgentRepository(db: Kysely<RegistryDatabase>, options: { outbox: boolean }) {
  async function announce(trx: Transaction<RegistryDatabase>, tenantId: string, type: AgentChange['type'], name: string, version: number) {
    const change: AgentChange = { id: randomUUID(), tenantId, type, name, version, at: new Date().toISOString() };
    if (options.outbox) {
      await trx
        .insertInto('agent_change_outbox')
        .values({ agent_key: `${tenantId}/${name}`, payload: jsonb(change) })
        .execute();
    }
    return change;
  }

  const currentVersions = () =>
    db
      .selectFrom('agents as a')
      .innerJoin('agent_versions as v', (join) =>
        join.onRef('v.tenant_id', '=', 'a.tenant_id').onRef('v.name', '=', 'a.name').onRef('v.version', '=', 'a.current_version'),
      )
      .select(['v.definition', 'v.version', 'v.created_at', 'v.created_by', 'a.updated_at']);

  const toStored = (row: VersionRow & { updated_at: Date }): StoredAgent => ({
    ...toRecord(row),
    updatedAt: row.updated_at.toISOString(),
  });

  return {
    async listCurrent(tenantId: string): Promise<StoredAgent[]> {
      const rows = await currentVersions().where('a.tenant_id', '=', tenantId).orderBy('a.name').execute();
      return rows.map(toStored);
    },

    async getCurrent(tenantId: string, name: string): Promise<StoredAgent | undefined> {
      const row = await currentVersions().where('a.tenant_id', '=', tenantId).where('a.name', '=', name).executeTakeFirst();
      return row && toStored(row);
    },

    async exists(tenantId: string, name: string): Promise<boolean> {
      const row = await db
        .selectFrom('agents')
        .select('name')
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .executeTakeFirst();
      return !!row;
    },

    async listVersions(tenantId: string, name: string): Promise<Required<AgentDefinitionRecord>[]> {
      const rows = await db
        .selectFrom('agent_versions')
        .select(['definition', 'version', 'created_at', 'created_by'])
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .orderBy('version', 'desc')
        .execute();
      return rows.map(toRecord);
    },

    async getVersions(tenantId: string, name: string, versions: number[]): Promise<Map<number, Required<AgentDefinitionRecord>>> {
      const rows = await db
        .selectFrom('agent_versions')
        .select(['definition', 'version', 'created_at', 'created_by'])
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .where('version', 'in', versions)
        .execute();
      return new Map(rows.map((row) => [row.version, toRecord(row)]));
    },

    /** Direct callable-agent references of every stored agent of a tenant (for cycle checks). */
    async callEdges(tenantId: string): Promise<Map<string, string[]>> {
      const rows = await currentVersions().where('a.tenant_id', '=', tenantId).execute();
      return new Map(rows.map((row) => [row.definition.name, row.definition.agents ?? []]));
    },

    /** Stores version 1; undefined when the name is already taken (nothing written). */
    async insertFirst(
      tenantId: string,
      definition: AgentDefinition,
      actor: string,
    ): Promise<Changed<Required<AgentDefinitionRecord>> | undefined> {
      return db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('agents')
          .values({ tenant_id: tenantId, name: definition.name, current_version: 1 })
          .onConflict((conflict) => conflict.columns(['tenant_id', 'name']).doNothing())
          .returning('name')
          .executeTakeFirst();
        if (!inserted) return undefined;
        const row = await trx
          .insertInto('agent_versions')
          .values({
            tenant_id: tenantId,
            name: definition.name,
            version: 1,
            definition: jsonb<AgentDefinition>(definition),
            created_by: actor,
          })
          .returning(['definition', 'version', 'created_at', 'created_by'])
          .executeTakeFirstOrThrow();
        return { result: toRecord(row), change: await announce(trx, tenantId, 'agent.created', definition.name, 1) };
      });
    },

    /** Appends the next version; undefined when the agent does not exist. Serialized per agent by the row lock. */
    async appendVersion(
      tenantId: string,
      definition: AgentDefinition,
      actor: string,
    ): Promise<Changed<Required<AgentDefinitionRecord>> | undefined> {
      return db.transaction().execute(async (trx) => {
        const agent = await trx
          .selectFrom('agents')
          .select('current_version')
          .where('tenant_id', '=', tenantId)
          .where('name', '=', definition.name)
          .forUpdate()
          .executeTakeFirst();
        if (!agent) return undefined;
        const version = agent.current_version + 1;
        const row = await trx
          .insertInto('agent_versions')
          .values({
            tenant_id: tenantId,
            name: definition.name,
            version,
            definition: jsonb<AgentDefinition>(definition),
            created_by: actor,
          })
          .returning(['definition', 'version', 'created_at', 'created_by'])
          .executeTakeFirstOrThrow();
        await trx
          .updateTable('agents')
          .set({ current_version: version, updated_at: sql`now()` })
          .where('tenant_id', '=', tenantId)
          .where('name', '=', definition.name)
          .execute();
        return { result: toRecord(row), change: await announce(trx, tenantId, 'agent.updated', definition.name, version) };
      });
    },

    /** Removes the agent and all its versions; undefined when there was none. */
    async delete(tenantId: string, name: string): Promise<Changed<void> | undefined> {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx
          .deleteFrom('agents')
          .where('tenant_id', '=', tenantId)
          .where('name', '=', name)
          .returning('current_version')
          .executeTakeFirst();
        if (!deleted) return undefined;
        return { result: undefined, change: await announce(trx, tenantId, 'agent.deleted', name, deleted.current_version) };
      });
    },

    /** Ships queued changes to the event log (see `shipOutbox` in @hangar/storage). */
    shipOutbox: ((lease, ship) => shipOutbox(db, AGENT_CHANGE_OUTBOX, lease, ship)) satisfies ShipOutbox,
  };
}

export type AgentRepository = ReturnType<typeof createAgentRepository>;

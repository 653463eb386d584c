import { randomUUID } from 'node:crypto';
import { jsonb, sql, type Generated, type Kysely, type Selectable } from '@hangar/storage';
import type { RegistryDatabase } from '../agent.repository.js';
import type {
  Discovery,
  DiscoveredResource,
  DiscoveredTool,
  ToolServer,
  ToolServerInput,
  ToolServerStatus,
  ToolServerTransport,
} from './tool-server.model.js';

export interface ToolServerTable {
  tenant_id: string;
  name: string;
  url: string;
  transport: string;
  headers: unknown;
  secret_key: string | null;
  enabled: boolean;
  status: string;
  tools: unknown;
  resources: Generated<unknown>;
  error: string | null;
  refreshed_at: Date | null;
  /** Until when one instance's refresh holds the server (others skip it). */
  refresh_claimed_until: Date | null;
  /** New on every save (a UUID, unique across deletes), so a discovery of older settings is not recorded over newer ones. */
  generation: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

const toToolServer = (row: Selectable<ToolServerTable>): ToolServer => ({
  tenantId: row.tenant_id,
  name: row.name,
  url: row.url,
  transport: row.transport as ToolServerTransport,
  headers: row.headers as Record<string, string>,
  secretKey: row.secret_key,
  enabled: row.enabled,
  status: row.status as ToolServerStatus,
  tools: row.tools as DiscoveredTool[],
  resources: row.resources as DiscoveredResource[],
  error: row.error,
  refreshedAt: row.refreshed_at,
  generation: row.generation,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** A tenant's tool servers and their discovered tools (`tool_servers`). */
export function createToolServerRepository(db: Kysely<RegistryDatabase>) {
  return {
    /**
     * Saves a server; a replaced one forgets its tools and is discovered again. `claimMs` holds it
     * from the background refresh while the save discovers it (null: the save does not).
     */
    async put(
      tenantId: string,
      name: string,
      input: ToolServerInput,
      claimMs: number | null,
    ): Promise<{ toolServer: ToolServer; created: boolean }> {
      const status: ToolServerStatus = input.enabled ? 'Pending' : 'Disabled';
      const claimedUntil = claimMs === null ? null : sql<Date>`now() + ${claimMs} * interval '1 millisecond'`;
      const row = await db
        .insertInto('tool_servers')
        .values({
          tenant_id: tenantId,
          name,
          url: input.url,
          transport: input.transport,
          headers: jsonb(input.headers),
          secret_key: input.secretKey,
          enabled: input.enabled,
          status,
          tools: jsonb([]),
          resources: jsonb([]),
          error: null,
          refreshed_at: null,
          refresh_claimed_until: claimedUntil,
          generation: randomUUID(),
        })
        .onConflict((conflict) =>
          conflict.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({
            url: eb.ref('excluded.url'),
            transport: eb.ref('excluded.transport'),
            headers: eb.ref('excluded.headers'),
            secret_key: eb.ref('excluded.secret_key'),
            enabled: eb.ref('excluded.enabled'),
            status: eb.ref('excluded.status'),
            tools: eb.ref('excluded.tools'),
            resources: eb.ref('excluded.resources'),
            error: null,
            refreshed_at: null,
            refresh_claimed_until: eb.ref('excluded.refresh_claimed_until'),
            generation: eb.ref('excluded.generation'),
            updated_at: sql<Date>`now()`,
          })),
        )
        .returningAll()
        // xmax is 0 for a row this statement inserted, not for one it updated.
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirstOrThrow();
      return { toolServer: toToolServer(row), created: row.inserted };
    },

    async get(tenantId: string, name: string): Promise<ToolServer | undefined> {
      const row = await db
        .selectFrom('tool_servers')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .executeTakeFirst();
      return row && toToolServer(row);
    },

    async list(tenantId: string): Promise<ToolServer[]> {
      const rows = await db.selectFrom('tool_servers').selectAll().where('tenant_id', '=', tenantId).orderBy('name').execute();
      return rows.map(toToolServer);
    },

    async delete(tenantId: string, name: string): Promise<boolean> {
      const deleted = await db.deleteFrom('tool_servers').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return deleted.numDeletedRows > 0n;
    },

    /**
     * Records a discovery of the server as saved in `generation`; a server saved again (or deleted
     * and made again) meanwhile is left alone, since what was found belongs to the old settings.
     */
    async recordDiscovery(tenantId: string, name: string, generation: string, discovery: Discovery): Promise<ToolServer | undefined> {
      const row = await db
        .updateTable('tool_servers')
        .set({
          status: discovery.ok ? 'Ready' : 'Failed',
          ...(discovery.ok && { tools: jsonb(discovery.tools), resources: jsonb(discovery.resources) }),
          error: discovery.ok ? null : discovery.error,
          refreshed_at: sql<Date>`now()`,
          refresh_claimed_until: null,
        })
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .where('generation', '=', generation)
        .where('enabled', '=', true)
        .returningAll()
        .executeTakeFirst();
      return row && toToolServer(row);
    },

    /**
     * Claims up to `limit` enabled servers of any tenant whose tools are at least `intervalMs`
     * old (or never discovered) for `claimMs`: instances refreshing side by side take different ones.
     * At least, not older: PGlite's clock ticks in milliseconds, so a discovery and a claim right
     * after it can share one timestamp.
     */
    async claimDue(intervalMs: number, claimMs: number, limit: number): Promise<ToolServer[]> {
      const due = db
        .selectFrom('tool_servers')
        .select(['tenant_id', 'name'])
        .where('enabled', '=', true)
        .where((eb) =>
          eb.or([eb('refreshed_at', 'is', null), eb('refreshed_at', '<=', sql<Date>`now() - ${intervalMs} * interval '1 millisecond'`)]),
        )
        .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', sql<Date>`now()`)]))
        .orderBy(sql`refreshed_at asc nulls first`)
        .limit(limit)
        .forUpdate()
        .skipLocked();
      const rows = await db
        .updateTable('tool_servers')
        .set({ refresh_claimed_until: sql<Date>`now() + ${claimMs} * interval '1 millisecond'` })
        .where(sql<boolean>`(tenant_id, name) in (${due})`)
        .returningAll()
        .execute();
      return rows.map(toToolServer);
    },
  };
}

export type ToolServerRepository = ReturnType<typeof createToolServerRepository>;

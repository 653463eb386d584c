import { jsonb, sql, type Generated, type Kysely, type Selectable } from '@hangar/storage';
import type { GovernanceDatabase } from '../governance.database.js';

/** A tenant's own binding of a model provider (the API key is a configuration key NAME). */
export interface TenantProvider {
  kind: string;
  endpoint: string | null;
  apiKeyKey: string;
}

export interface TenantDatabase {
  tenants: {
    id: string;
    display_name: string;
    enabled: boolean;
    providers: Record<string, TenantProvider>;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
}

export interface TenantRecord {
  id: string;
  displayName: string;
  enabled: boolean;
  providers: Record<string, TenantProvider>;
  createdAt: string;
  updatedAt: string;
}

const toRecord = (row: Selectable<TenantDatabase['tenants']>): TenantRecord => ({
  id: row.id,
  displayName: row.display_name,
  enabled: row.enabled,
  providers: row.providers,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** Stored tenants (`tenants`); a tenant never stored exists implicitly and is not here. */
export function createTenantRepository(db: Kysely<GovernanceDatabase>) {
  return {
    /** Creates or replaces the tenant; `created` tells which (an upsert, so two writers cannot both create). */
    async put(
      tenant: Pick<TenantRecord, 'id' | 'displayName' | 'enabled' | 'providers'>,
    ): Promise<{ tenant: TenantRecord; created: boolean }> {
      const row = await db
        .insertInto('tenants')
        .values({
          id: tenant.id,
          display_name: tenant.displayName,
          enabled: tenant.enabled,
          providers: jsonb<Record<string, TenantProvider>>(tenant.providers),
        })
        .onConflict((conflict) =>
          conflict.column('id').doUpdateSet({
            display_name: (eb) => eb.ref('excluded.display_name'),
            enabled: (eb) => eb.ref('excluded.enabled'),
            providers: (eb) => eb.ref('excluded.providers'),
            updated_at: sql<Date>`now()`,
          }),
        )
        .returningAll()
        // xmax is 0 for a row this statement inserted, not for one it updated.
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirstOrThrow();
      return { tenant: toRecord(row), created: row.inserted };
    },

    async get(id: string): Promise<TenantRecord | undefined> {
      const row = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },

    async list(): Promise<TenantRecord[]> {
      return (await db.selectFrom('tenants').selectAll().orderBy('id').execute()).map(toRecord);
    },

    /** Whether a stored tenant was deleted. */
    async delete(id: string): Promise<boolean> {
      const deleted = await db.deleteFrom('tenants').where('id', '=', id).executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    },
  };
}

export type TenantRepository = ReturnType<typeof createTenantRepository>;

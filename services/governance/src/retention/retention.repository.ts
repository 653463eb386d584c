import { releaseLease, sql, takeLease, type Generated, type Kysely, type Selectable } from '@hangar/storage';
import type { GovernanceDatabase } from '../governance.database.js';

export interface RetentionDatabase {
  retention_policies: {
    target: string;
    /** Null: kept forever. */
    max_age_ms: string | number | null;
    archive: boolean;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  retention_lease: { id: number; owner: string | null; expires_at: Date | null };
}

export interface StoredPolicy {
  target: string;
  maxAgeMs: number | null;
  archive: boolean;
}

const toPolicy = (row: Selectable<RetentionDatabase['retention_policies']>): StoredPolicy => ({
  target: row.target,
  maxAgeMs: row.max_age_ms === null ? null : Number(row.max_age_ms),
  archive: row.archive,
});

/** Stored retention policies (over configuration) and the lease that lets one instance sweep at a time. */
export function createRetentionRepository(db: Kysely<GovernanceDatabase>) {
  return {
    async list(): Promise<StoredPolicy[]> {
      return (await db.selectFrom('retention_policies').selectAll().orderBy('target').execute()).map(toPolicy);
    },

    async put(policy: StoredPolicy): Promise<{ created: boolean }> {
      const row = await db
        .insertInto('retention_policies')
        .values({ target: policy.target, max_age_ms: policy.maxAgeMs, archive: policy.archive })
        .onConflict((conflict) =>
          conflict.column('target').doUpdateSet({
            max_age_ms: (eb) => eb.ref('excluded.max_age_ms'),
            archive: (eb) => eb.ref('excluded.archive'),
            updated_at: sql<Date>`now()`,
          }),
        )
        // xmax is 0 for a row this statement inserted, not for one it updated.
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirstOrThrow();
      return { created: row.inserted };
    },

    async delete(target: string): Promise<boolean> {
      const result = await db.deleteFrom('retention_policies').where('target', '=', target).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Takes (or extends) the sweep lease for `owner`; false while another instance holds it. */
    takeLease: (owner: string, leaseMs: number) => takeLease(db, 'retention_lease', owner, leaseMs),

    releaseLease: (owner: string) => releaseLease(db, 'retention_lease', owner),
  };
}

export type RetentionRepository = ReturnType<typeof createRetentionRepository>;

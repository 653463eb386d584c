import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { GovernanceDatabase } from './governance.database.js';

export interface IdempotencyDatabase {
  idempotency_keys: {
    tenant_id: string;
    scope: string;
    key: string;
    fingerprint: string;
    state: 'in_progress' | 'completed';
    locked_until: Date;
    response: unknown;
    created_at: Date;
    expires_at: Date;
  };
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type BeginOutcome =
  { outcome: 'started' } | { outcome: 'replay'; response: StoredResponse } | { outcome: 'in_progress' } | { outcome: 'mismatch' };

const interval = (ms: number) => sql<Date>`now() + ${`${ms} milliseconds`}::interval`;

/**
 * Idempotency keys per tenant and scope; a key's row is locked while it is decided. The stored
 * response is sealed with `cipher` when content protection is on.
 */
export function createIdempotencyRepository(db: Kysely<GovernanceDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  return {
    async begin(
      target: { tenantId: string; scope: string; key: string },
      fingerprint: string,
      lockMs: number,
      retentionMs: number,
    ): Promise<BeginOutcome> {
      const insertKey = (executor: Kysely<GovernanceDatabase>) =>
        executor
          .insertInto('idempotency_keys')
          .values({
            tenant_id: target.tenantId,
            scope: target.scope,
            key: target.key,
            fingerprint,
            state: 'in_progress',
            locked_until: interval(lockMs),
            response: null,
            created_at: sql<Date>`now()`,
            expires_at: interval(retentionMs),
          })
          .onConflict((conflict) => conflict.columns(['tenant_id', 'scope', 'key']).doNothing())
          .returning('key')
          .executeTakeFirst();
      // The common case, a key never seen: one statement.
      if (await insertKey(db)) return { outcome: 'started' };
      return db.transaction().execute(async (trx) => {
        const where = <Q extends { where: any }>(query: Q): Q =>
          query.where('tenant_id', '=', target.tenantId).where('scope', '=', target.scope).where('key', '=', target.key);
        // A key past its retention is forgotten: the same key starts afresh.
        await where(trx.deleteFrom('idempotency_keys'))
          .where('expires_at', '<=', sql<Date>`now()`)
          .execute();
        const inserted = await insertKey(trx);
        if (inserted) return { outcome: 'started' };
        const row = await where(trx.selectFrom('idempotency_keys').selectAll()).forUpdate().executeTakeFirst();
        if (!row) return { outcome: 'in_progress' }; // released between the insert and this read: let the client retry
        if (row.fingerprint !== fingerprint) return { outcome: 'mismatch' };
        if (row.state === 'completed')
          return { outcome: 'replay', response: cipher.openJson(target.tenantId, 'IdempotencyResponses', row.response) as StoredResponse };
        if (row.locked_until > new Date()) return { outcome: 'in_progress' };
        // The first holder stopped (its gateway died) without completing: this request takes over.
        await where(trx.updateTable('idempotency_keys').set({ locked_until: interval(lockMs) })).execute();
        return { outcome: 'started' };
      });
    },

    async complete(target: { tenantId: string; scope: string; key: string }, response: StoredResponse) {
      await db
        .updateTable('idempotency_keys')
        .set({ state: 'completed', response: jsonb(cipher.sealJson(target.tenantId, 'IdempotencyResponses', response)) })
        .where('tenant_id', '=', target.tenantId)
        .where('scope', '=', target.scope)
        .where('key', '=', target.key)
        .execute();
    },

    async release(target: { tenantId: string; scope: string; key: string }) {
      await db
        .deleteFrom('idempotency_keys')
        .where('tenant_id', '=', target.tenantId)
        .where('scope', '=', target.scope)
        .where('key', '=', target.key)
        .where('state', '=', 'in_progress')
        .execute();
    },

    /** Deletes keys past their retention; returns how many. */
    async purgeExpired(): Promise<number> {
      const result = await db
        .deleteFrom('idempotency_keys')
        .where('expires_at', '<=', sql<Date>`now()`)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;

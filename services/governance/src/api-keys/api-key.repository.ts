import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { GovernanceDatabase } from '../governance.database.js';

export interface ApiKeyDatabase {
  api_keys: {
    id: string;
    tenant_id: string;
    name: string;
    role: string;
    scopes: string[] | null;
    prefix: string;
    key_hash: string;
    user_id: string | null;
    labels: Record<string, string>;
    expires_at: Date | null;
    created_at: Date;
    created_by: string;
    last_used_at: Date | null;
    revoked_at: Date | null;
  };
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string;
  role: string;
  /** Null: every scope of the role. */
  scopes: string[] | null;
  prefix: string;
  userId: string | null;
  labels: Record<string, string>;
  expiresAt: string | null;
  createdAt: string;
  createdBy: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

type Row = ApiKeyDatabase['api_keys'];

const toRecord = (row: Row): ApiKeyRecord => ({
  id: row.id,
  tenantId: row.tenant_id,
  name: row.name,
  role: row.role,
  scopes: row.scopes,
  prefix: row.prefix,
  userId: row.user_id,
  labels: row.labels,
  expiresAt: row.expires_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
  revokedAt: row.revoked_at?.toISOString() ?? null,
});

/** Every SQL statement about API keys. Only the key's SHA-256 is stored. */
export function createApiKeyRepository(db: Kysely<GovernanceDatabase>) {
  return {
    async insert(key: Omit<ApiKeyRecord, 'createdAt' | 'lastUsedAt' | 'revokedAt'> & { keyHash: string }): Promise<ApiKeyRecord> {
      const row = await db
        .insertInto('api_keys')
        .values({
          id: key.id,
          tenant_id: key.tenantId,
          name: key.name,
          role: key.role,
          scopes: key.scopes === null ? null : jsonb(key.scopes),
          prefix: key.prefix,
          key_hash: key.keyHash,
          user_id: key.userId,
          labels: jsonb(key.labels),
          expires_at: key.expiresAt === null ? null : new Date(key.expiresAt),
          created_by: key.createdBy,
        } as never)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRecord(row as Row);
    },

    async list(tenantId: string): Promise<ApiKeyRecord[]> {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map((row) => toRecord(row as Row));
    },

    async get(tenantId: string, id: string): Promise<ApiKeyRecord | undefined> {
      const row = await db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
      return row && toRecord(row as Row);
    },

    /** Revokes a key in force; undefined when there is none with that id (or it was revoked already). */
    async revoke(tenantId: string, id: string): Promise<ApiKeyRecord | undefined> {
      const row = await db
        .updateTable('api_keys')
        .set({ revoked_at: sql`now()` })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return row && toRecord(row as Row);
    },

    /** The key in force with this hash: not revoked, not expired. */
    async inForce(keyHash: string): Promise<ApiKeyRecord | undefined> {
      const row = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('key_hash', '=', keyHash)
        .where('revoked_at', 'is', null)
        .where((where) => where.or([where('expires_at', 'is', null), where('expires_at', '>', sql<Date>`now()`)]))
        .executeTakeFirst();
      return row && toRecord(row as Row);
    },

    /** Records when keys were last used (a statement per key, once per flush; the moments only move forward). */
    async touch(lastUsed: Map<string, Date>): Promise<void> {
      if (!lastUsed.size) return;
      for (const [id, at] of lastUsed)
        await db
          .updateTable('api_keys')
          .set({ last_used_at: sql`greatest(coalesce(last_used_at, ${at}), ${at})` })
          .where('id', '=', id)
          .execute();
    },
  };
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>;

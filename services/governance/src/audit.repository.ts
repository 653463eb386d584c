import { randomUUID } from 'node:crypto';
import { jsonb, type Generated, type Kysely } from '@hangar/storage';
import type { GovernanceDatabase } from './governance.database.js';

export interface AuditDatabase {
  audit_entries: {
    id: string;
    tenant_id: string;
    actor: string;
    user_id: string | null;
    action: string;
    resource_type: string;
    resource_id: string;
    details: Generated<Record<string, unknown>>;
    created_at: Generated<Date>;
  };
}

export interface AuditEntry {
  id: string;
  tenantId: string;
  actor: string;
  userId: string | null;
  action: string;
  resourceType: string;
  resourceId: string;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface AuditFilter {
  action?: string;
  resourceType?: string;
  resourceId?: string;
  skip: number;
  take: number;
}

type Row = AuditDatabase['audit_entries'] & { details: Record<string, unknown>; created_at: Date };

const toEntry = (row: Row): AuditEntry => ({
  id: row.id,
  tenantId: row.tenant_id,
  actor: row.actor,
  userId: row.user_id,
  action: row.action,
  resourceType: row.resource_type,
  resourceId: row.resource_id,
  details: row.details,
  createdAt: row.created_at.toISOString(),
});

/** The audit trail: append-only rows per tenant. */
export function createAuditRepository(db: Kysely<GovernanceDatabase>) {
  return {
    async append(entry: Omit<AuditEntry, 'id' | 'createdAt'>): Promise<AuditEntry> {
      const row = await db
        .insertInto('audit_entries')
        .values({
          id: randomUUID(),
          tenant_id: entry.tenantId,
          actor: entry.actor,
          user_id: entry.userId,
          action: entry.action,
          resource_type: entry.resourceType,
          resource_id: entry.resourceId,
          details: jsonb(entry.details),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toEntry(row as Row);
    },

    /** Newest first (ties by id, so pages are stable). */
    async list(tenantId: string, filter: AuditFilter): Promise<AuditEntry[]> {
      let query = db.selectFrom('audit_entries').selectAll().where('tenant_id', '=', tenantId);
      if (filter.action) query = query.where('action', '=', filter.action);
      if (filter.resourceType) query = query.where('resource_type', '=', filter.resourceType);
      if (filter.resourceId) query = query.where('resource_id', '=', filter.resourceId);
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').offset(filter.skip).limit(filter.take).execute();
      return rows.map((row) => toEntry(row as Row));
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;

import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import type { Workflow, WorkflowDefinition } from './workflow.model.js';

const UNIQUE_VIOLATION = '23505';

/** Workflow definitions: every version of each, per tenant. */
export function createWorkflowDefinitionStore(db: Kysely<RunDatabase>) {
  const workflowOf = (row: {
    name: string;
    version: number;
    definition: unknown;
    created_at: Date;
    first_created_at: Date | null;
  }): Workflow => ({
    name: row.name,
    version: row.version,
    definition: row.definition as WorkflowDefinition,
    createdAt: row.first_created_at ?? row.created_at,
    updatedAt: row.created_at,
  });
  const versions = (tenantId: string) =>
    db
      .selectFrom('workflows as v')
      .select([
        'v.name',
        'v.version',
        'v.definition',
        'v.created_at',
        (eb) =>
          eb
            .selectFrom('workflows as first')
            .select(sql<Date>`min(first.created_at)`.as('m'))
            .whereRef('first.tenant_id', '=', 'v.tenant_id')
            .whereRef('first.name', '=', 'v.name')
            .as('first_created_at'),
      ])
      .where('v.tenant_id', '=', tenantId);

  async function get(tenantId: string, name: string, version?: number): Promise<Workflow | undefined> {
    let query = versions(tenantId).where('v.name', '=', name);
    query = version === undefined ? query.orderBy('v.version', 'desc').limit(1) : query.where('v.version', '=', version);
    const row = await query.executeTakeFirst();
    return row && workflowOf(row);
  }

  return {
    /** Stores the definition as the workflow's next version; undefined when another writer took that version first. */
    async putVersion(
      tenantId: string,
      name: string,
      definition: WorkflowDefinition,
    ): Promise<{ workflow: Workflow; created: boolean } | undefined> {
      try {
        const inserted = await db
          .insertInto('workflows')
          .columns(['tenant_id', 'name', 'version', 'definition'])
          .expression((eb) =>
            eb
              .selectFrom('workflows')
              .select([
                sql<string>`${tenantId}::text`.as('tenant_id'),
                sql<string>`${name}::text`.as('name'),
                sql<number>`coalesce(max(version), 0) + 1`.as('version'),
                jsonb(definition).as('definition'),
              ])
              .where('tenant_id', '=', tenantId)
              .where('name', '=', name),
          )
          .returning('version')
          .executeTakeFirstOrThrow();
        const workflow = await get(tenantId, name, inserted.version);
        return workflow && { workflow, created: inserted.version === 1 };
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION) return undefined;
        throw error;
      }
    },

    /** A version, or the current one. */
    get,

    /** Each workflow's current version, by name. */
    async list(tenantId: string): Promise<Workflow[]> {
      const rows = await versions(tenantId)
        .where(({ eb, selectFrom }) =>
          eb(
            'v.version',
            '=',
            selectFrom('workflows as latest')
              .select(sql<number>`max(latest.version)`.as('v'))
              .whereRef('latest.tenant_id', '=', 'v.tenant_id')
              .whereRef('latest.name', '=', 'v.name'),
          ),
        )
        .orderBy('v.name')
        .execute();
      return rows.map(workflowOf);
    },

    async delete(tenantId: string, name: string): Promise<boolean> {
      const deleted = await db.deleteFrom('workflows').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return deleted.numDeletedRows > 0n;
    },
  };
}

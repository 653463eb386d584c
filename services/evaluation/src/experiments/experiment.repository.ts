import { jsonb, sql, type Generated, type Kysely, type Selectable } from '@hangar/storage';
import type { EvaluationDatabase } from '../database.js';

export interface ExperimentTables {
  experiments: {
    tenant_id: string;
    name: string;
    agent_name: string;
    variants: unknown;
    canary: unknown | null;
    status: string;
    reason: string | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
    started_at: Date | null;
    stopped_at: Date | null;
    scanned_at: Date | null;
  };
}

export type ExperimentStatus = 'Draft' | 'Running' | 'Stopped' | 'Completed' | 'RolledBack';
export interface Variant {
  version: number;
  weight: number;
}
export interface CanaryPolicy {
  baselineVersion: number;
  canaryVersion: number;
  initialPercent: number;
  stepPercent: number;
}

export interface ExperimentRecord {
  tenantId: string;
  name: string;
  agentName: string;
  variants: Variant[];
  canary: CanaryPolicy | null;
  status: ExperimentStatus;
  reason: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  stoppedAt: Date | null;
}

const toRecord = (row: Selectable<ExperimentTables['experiments']>): ExperimentRecord => ({
  tenantId: row.tenant_id,
  name: row.name,
  agentName: row.agent_name,
  variants: row.variants as Variant[],
  canary: row.canary as CanaryPolicy | null,
  status: row.status as ExperimentStatus,
  reason: row.reason,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  startedAt: row.started_at,
  stoppedAt: row.stopped_at,
});

/** A unique violation: another experiment of the agent is running. */
const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

/** Experiments and canaries; all their SQL. */
export function createExperimentRepository(db: Kysely<EvaluationDatabase>) {
  const byName = (tenantId: string, name: string) =>
    db.selectFrom('experiments').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name);

  return {
    /** Creates the experiment as a draft, or replaces a draft's or stopped one's setup (a running one is 409 in the service). */
    async put(tenantId: string, input: { name: string; agentName: string; variants: Variant[]; canary: CanaryPolicy | null }) {
      // A replaced experiment starts over as a draft.
      const setup = {
        agent_name: input.agentName,
        variants: jsonb(input.variants),
        canary: input.canary ? jsonb(input.canary) : null,
        status: 'Draft',
        reason: null,
        started_at: null,
        stopped_at: null,
      };
      const row = await db
        .insertInto('experiments')
        .values({ tenant_id: tenantId, name: input.name, ...setup, scanned_at: null })
        .onConflict((conflict) => conflict.columns(['tenant_id', 'name']).doUpdateSet({ ...setup, updated_at: sql<Date>`now()` }))
        .returningAll()
        .returning(sql<boolean>`(xmax = 0)`.as('created'))
        .executeTakeFirstOrThrow();
      return { experiment: toRecord(row), created: row.created };
    },

    async get(tenantId: string, name: string): Promise<ExperimentRecord | undefined> {
      const row = await byName(tenantId, name).executeTakeFirst();
      return row && toRecord(row);
    },

    async list(tenantId: string): Promise<ExperimentRecord[]> {
      return (await db.selectFrom('experiments').selectAll().where('tenant_id', '=', tenantId).orderBy('name').execute()).map(toRecord);
    },

    async delete(tenantId: string, name: string): Promise<ExperimentRecord | undefined> {
      const row = await db
        .deleteFrom('experiments')
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .returningAll()
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /** Starts it; 'conflict' when another experiment of its agent is running. */
    async start(tenantId: string, name: string): Promise<ExperimentRecord | 'conflict' | undefined> {
      try {
        const row = await db
          .updateTable('experiments')
          .set({
            status: 'Running',
            reason: null,
            started_at: sql<Date>`now()`,
            stopped_at: null,
            scanned_at: sql<Date>`now()`,
            updated_at: sql<Date>`now()`,
          })
          .where('tenant_id', '=', tenantId)
          .where('name', '=', name)
          .returningAll()
          .executeTakeFirst();
        return row && toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) return 'conflict';
        throw error;
      }
    },

    /** Ends a running experiment as `status` with `reason`; undefined when it was not running. */
    async end(tenantId: string, name: string, status: Exclude<ExperimentStatus, 'Draft' | 'Running'>, reason: string | null) {
      const row = await db
        .updateTable('experiments')
        .set({ status, reason, stopped_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .where('status', '=', 'Running')
        .returningAll()
        .executeTakeFirst();
      return row && toRecord(row);
    },

    async running(tenantId: string, agentName: string): Promise<ExperimentRecord | undefined> {
      const row = await db
        .selectFrom('experiments')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('agent_name', '=', agentName)
        .where('status', '=', 'Running')
        .executeTakeFirst();
      return row && toRecord(row);
    },

    /** Takes the running canaries not scanned for `intervalMs` (any tenant), so one instance scans each per interval. */
    async claimCanaries(intervalMs: number): Promise<ExperimentRecord[]> {
      const rows = await db
        .updateTable('experiments')
        .set({ scanned_at: sql<Date>`now()` })
        .where('status', '=', 'Running')
        .where('canary', 'is not', null)
        .where('scanned_at', '<=', sql<Date>`now() - ${`${intervalMs} milliseconds`}::interval`)
        .returningAll()
        .execute();
      return rows.map(toRecord);
    },

    async setVariants(tenantId: string, name: string, variants: Variant[]): Promise<void> {
      await db
        .updateTable('experiments')
        .set({ variants: jsonb(variants), updated_at: sql<Date>`now()` })
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .where('status', '=', 'Running')
        .execute();
    },
  };
}

export type ExperimentRepository = ReturnType<typeof createExperimentRepository>;

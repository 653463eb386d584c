import { randomUUID } from 'node:crypto';
import { PLAIN_CONTENT, type Caller, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { insertRun, usageOfRow } from '../runs/run.repository.js';
import { RUN_STATUSES, type NewRun } from '../runs/run.model.js';
import type { WorkflowCheckpoint, WorkflowDefinition, WorkflowRunRow, WorkflowState } from './workflow.model.js';
import { workflowContent } from './workflow-content.js';
import { createWorkflowDefinitionStore } from './workflow-definitions.repository.js';
import { createWorkflowRequestStore } from './workflow-requests.repository.js';

const after = (ms: number) => sql<Date>`now() + ${`${ms} milliseconds`}::interval`;

/**
 * Workflow runs beside their runs rows (leases, states, checkpoints, endings), with the
 * definitions' and the requests' stores: the one repository the workflow rules use. A run's input
 * is sealed as a run input, its states and output as run event data, when content protection is on.
 */
export function createWorkflowRepository(db: Kysely<RunDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const { seal, open } = workflowContent(cipher);

  const runColumns = [
    'w.run_id',
    'w.tenant_id',
    'w.workflow_name',
    'w.workflow_version',
    'w.definition',
    'w.input',
    'w.parameters',
    'w.caller',
    'w.state',
    'w.active_ms',
    'w.output',
    'w.created_at',
    'r.status',
    'r.error_type',
    'r.error_message',
    'r.completed_at',
  ] as const;
  const selectRuns = () => db.selectFrom('workflow_runs as w').innerJoin('runs as r', 'r.id', 'w.run_id').select(runColumns);
  type Row = Awaited<ReturnType<ReturnType<typeof selectRuns>['executeTakeFirstOrThrow']>>;
  const toRun = (row: Row): WorkflowRunRow => ({
    id: row.run_id,
    tenantId: row.tenant_id,
    workflow: row.workflow_name,
    version: row.workflow_version,
    definition: row.definition as WorkflowDefinition,
    status: RUN_STATUSES[row.status],
    input: cipher.openJson(row.tenant_id, 'RunInputs', row.input),
    parameters: row.parameters as Record<string, string>,
    caller: row.caller as Caller,
    state: open(row.tenant_id, row.state) as WorkflowState,
    activeMs: Number(row.active_ms),
    output: row.output === null ? null : open(row.tenant_id, row.output),
    errorType: row.error_type,
    errorMessage: row.error_message,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  });

  const runs = {
    /** A queued workflow run: its runs row (kind Workflow) and its own row, together. */
    async createRun(
      tenantId: string,
      run: NewRun,
      workflow: { name: string; version: number; definition: WorkflowDefinition },
      start: { input: unknown; parameters: Record<string, string>; caller: Caller; state: WorkflowState },
    ): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await insertRun(trx, tenantId, run, 'Queued');
        await trx
          .insertInto('workflow_runs')
          .values({
            run_id: run.id,
            tenant_id: tenantId,
            workflow_name: workflow.name,
            workflow_version: workflow.version,
            definition: jsonb(workflow.definition),
            input: jsonb(cipher.sealJson(tenantId, 'RunInputs', start.input)),
            parameters: jsonb(start.parameters),
            caller: jsonb(start.caller),
            state: seal(tenantId, start.state),
            phase: 'ready',
            output: null,
          })
          .execute();
      });
    },

    async getRun(tenantId: string, runId: string): Promise<WorkflowRunRow | undefined> {
      const row = await selectRuns().where('w.tenant_id', '=', tenantId).where('w.run_id', '=', runId).executeTakeFirst();
      return row && toRun(row);
    },

    /**
     * Leases up to `limit` runs that are ready and that nobody holds (or whose holder's lease
     * expired: it died), oldest first; `SKIP LOCKED` keeps two instances from taking the same.
     */
    async claimRuns(owner: string, leaseMs: number, limit: number): Promise<WorkflowRunRow[]> {
      const claimed = await db
        .updateTable('workflow_runs')
        .set({ lease_owner: owner, lease_expires_at: after(leaseMs), updated_at: sql`now()` })
        .where('run_id', 'in', (eb) =>
          eb
            .selectFrom('workflow_runs')
            .select('run_id')
            .where('phase', '=', 'ready')
            .where((where) => where.or([where('lease_expires_at', 'is', null), where('lease_expires_at', '<', sql<Date>`now()`)]))
            .orderBy('updated_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning('run_id')
        .execute();
      if (!claimed.length) return [];
      const rows = await selectRuns()
        .where(
          'w.run_id',
          'in',
          claimed.map((row) => row.run_id),
        )
        .execute();
      return rows.map(toRun);
    },

    /** Extends a lease this instance still holds; false when it lost it. */
    async renewLease(runId: string, owner: string, leaseMs: number): Promise<boolean> {
      const renewed = await db
        .updateTable('workflow_runs')
        .set({ lease_expires_at: after(leaseMs) })
        .where('run_id', '=', runId)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return renewed.numUpdatedRows > 0n;
    },

    /**
     * Saves where the run stands (a step finished; with `output`, how it ended) while this instance
     * holds it; false when it lost the lease.
     */
    async saveState(run: WorkflowRunRow, owner: string, state: WorkflowState, activeMs: number, output?: unknown): Promise<boolean> {
      const saved = await db
        .updateTable('workflow_runs')
        .set({
          state: seal(run.tenantId, state),
          active_ms: activeMs,
          updated_at: sql`now()`,
          ...(output !== undefined && { output: seal(run.tenantId, output) }),
        })
        .where('run_id', '=', run.id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return saved.numUpdatedRows > 0n;
    },

    /**
     * A super step's checkpoint, written only while `owner` holds the run; writing it again (a
     * resumed super step) keeps the first. Undefined when the run is no longer this owner's.
     */
    async checkpoint(run: WorkflowRunRow, owner: string, state: WorkflowState): Promise<string | undefined> {
      const row = await db
        .insertInto('workflow_checkpoints')
        .columns(['id', 'run_id', 'super_step', 'state', 'run_ended_at'])
        .expression((eb) =>
          eb
            .selectFrom('workflow_runs')
            .select([
              sql<string>`${randomUUID()}::uuid`.as('id'),
              'run_id',
              sql<number>`${state.superStep}::int`.as('super_step'),
              seal(run.tenantId, state).as('state'),
              sql<Date | null>`null::timestamptz`.as('run_ended_at'),
            ])
            .where('run_id', '=', run.id)
            .where('lease_owner', '=', owner),
        )
        .onConflict((conflict) => conflict.columns(['run_id', 'super_step']).doUpdateSet({ run_id: run.id }))
        .returning('id')
        .executeTakeFirst();
      return row?.id;
    },

    async checkpoints(tenantId: string, runId: string): Promise<WorkflowCheckpoint[]> {
      const rows = await db.selectFrom('workflow_checkpoints').selectAll().where('run_id', '=', runId).orderBy('super_step').execute();
      return rows.map((row) => ({
        id: row.id,
        superStep: row.super_step,
        createdAt: row.created_at,
        state: open(tenantId, row.state) as WorkflowState,
      }));
    },

    async dropCheckpoints(runId: string): Promise<void> {
      await db.deleteFrom('workflow_checkpoints').where('run_id', '=', runId).execute();
    },

    /**
     * Gives the run back while it waits for human answers (nobody holds it; an answer makes it
     * ready), its state saved. When every answer came meanwhile it stays with `owner` (`ready`: go
     * on); `lost` when `owner` no longer holds it.
     */
    async pause(run: WorkflowRunRow, owner: string, state: WorkflowState, activeMs: number): Promise<'waiting' | 'ready' | 'lost'> {
      return db.transaction().execute(async (trx) => {
        const held = await trx
          .selectFrom('workflow_runs')
          .select('lease_owner')
          .where('run_id', '=', run.id)
          .forUpdate()
          .executeTakeFirst();
        if (held?.lease_owner !== owner) return 'lost';
        const pending = await trx
          .selectFrom('workflow_requests')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('run_id', '=', run.id)
          .where('status', '=', 'Pending')
          .executeTakeFirstOrThrow();
        const waiting = pending.n > 0;
        await trx
          .updateTable('workflow_runs')
          .set({
            state: seal(run.tenantId, state),
            active_ms: activeMs,
            updated_at: sql`now()`,
            ...(waiting && { phase: 'waiting' as const, lease_owner: null, lease_expires_at: null }),
          })
          .where('run_id', '=', run.id)
          .execute();
        if (waiting)
          await trx
            .updateTable('runs')
            .set({ status: RUN_STATUSES.indexOf('AwaitingApproval') })
            .where('id', '=', run.id)
            .execute();
        return waiting ? 'waiting' : 'ready';
      });
    },

    /** Whether `owner` still holds the run (its lease not expired). */
    async holdsLease(runId: string, owner: string): Promise<boolean> {
      const row = await db
        .selectFrom('workflow_runs')
        .select('run_id')
        .where('run_id', '=', runId)
        .where('lease_owner', '=', owner)
        .where('lease_expires_at', '>', sql<Date>`now()`)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Takes a run nobody executes (queued, waiting for answers, or ready with no live lease) for
     * `owner`, to end it; undefined when an instance holds it or it ended.
     */
    async takeIdle(tenantId: string, runId: string, owner: string, leaseMs: number): Promise<WorkflowRunRow | undefined> {
      const taken = await db
        .updateTable('workflow_runs')
        .set({ lease_owner: owner, lease_expires_at: after(leaseMs) })
        .where('run_id', '=', runId)
        .where('tenant_id', '=', tenantId)
        .where('phase', 'in', ['ready', 'waiting'])
        .where((where) => where.or([where('lease_expires_at', 'is', null), where('lease_expires_at', '<', sql<Date>`now()`)]))
        .executeTakeFirst();
      return taken.numUpdatedRows > 0n ? runs.getRun(tenantId, runId) : undefined;
    },

    /** Gives the lease back without ending the run (the instance stops): another takes it at once. */
    async release(runId: string, owner: string): Promise<void> {
      await db
        .updateTable('workflow_runs')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('run_id', '=', runId)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /** The run's own row ends, while `owner` holds it (its state and output saved, its runs row finished, before). */
    async end(runId: string, owner: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const ended = await trx
          .updateTable('workflow_runs')
          .set({ phase: 'ended', lease_owner: null, lease_expires_at: null, updated_at: sql`now()` })
          .where('run_id', '=', runId)
          .where('lease_owner', '=', owner)
          .executeTakeFirst();
        // Retention of its checkpoints counts from now.
        if (ended.numUpdatedRows > 0n)
          await trx
            .updateTable('workflow_checkpoints')
            .set({ run_ended_at: sql`now()` })
            .where('run_id', '=', runId)
            .execute();
      });
    },

    /** Step runs of this workflow run left executing by an instance that died (or lost the lease): their ids. */
    async interruptedSteps(runId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('runs')
        .select('id')
        .where('parent_run_id', '=', runId)
        .where('status', 'in', [RUN_STATUSES.indexOf('Running'), RUN_STATUSES.indexOf('AwaitingApproval')])
        .execute();
      return rows.map((row) => row.id);
    },

    /** What the run's steps spent: their runs' usage and cost, summed (the workflow run's own). */
    async stepTotals(runId: string) {
      const row = await db
        .selectFrom('runs')
        .select([
          sql<string>`coalesce(sum(input_tokens), 0)`.as('input_tokens'),
          sql<string>`coalesce(sum(output_tokens), 0)`.as('output_tokens'),
          sql<string>`coalesce(sum(cached_input_tokens), 0)`.as('cached_input_tokens'),
          sql<string>`coalesce(sum(reasoning_tokens), 0)`.as('reasoning_tokens'),
          sql<string>`coalesce(sum(total_tokens), 0)`.as('total_tokens'),
          sql<string | null>`sum(total_cost)`.as('total_cost'),
          sql<string | null>`max(cost_currency)`.as('currency'),
        ])
        .where('parent_run_id', '=', runId)
        .executeTakeFirstOrThrow();
      return {
        usage: usageOfRow(row),
        cost:
          row.total_cost === null
            ? null
            : { input: null, output: null, cachedInput: null, total: Number(row.total_cost), currency: row.currency ?? 'USD' },
      };
    },
  };
  return { ...createWorkflowDefinitionStore(db), ...createWorkflowRequestStore(db, cipher), ...runs };
}

export type WorkflowRepository = ReturnType<typeof createWorkflowRepository>;

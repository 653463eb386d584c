import { randomUUID } from 'node:crypto';
import { PLAIN_CONTENT, type Caller, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { insertRun } from '../runs/run.repository.js';
import { RUN_STATUSES, type NewRun } from '../runs/run.model.js';
import type { Workflow, WorkflowCheckpoint, WorkflowDefinition, WorkflowRequest, WorkflowRunRow, WorkflowState } from './workflow.model.js';

const UNIQUE_VIOLATION = '23505';
const after = (ms: number) => sql<Date>`now() + ${`${ms} milliseconds`}::interval`;

/**
 * Workflow definitions (every version), workflow runs beside their runs rows, their checkpoints
 * and human-input requests. Inputs are sealed as run inputs, states, outputs and answers as run
 * event data, when content protection is on.
 */
export function createWorkflowRepository(db: Kysely<RunDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const seal = (tenantId: string, value: unknown) => jsonb(cipher.sealJson(tenantId, 'RunEventData', value));
  const open = (tenantId: string, stored: unknown) => cipher.openJson(tenantId, 'RunEventData', stored);

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
        const workflow = await this.get(tenantId, name, inserted.version);
        return workflow && { workflow, created: inserted.version === 1 };
      } catch (error) {
        if ((error as { code?: string }).code === UNIQUE_VIOLATION) return undefined;
        throw error;
      }
    },

    /** A version, or the current one. */
    async get(tenantId: string, name: string, version?: number): Promise<Workflow | undefined> {
      let query = versions(tenantId).where('v.name', '=', name);
      query = version === undefined ? query.orderBy('v.version', 'desc').limit(1) : query.where('v.version', '=', version);
      const row = await query.executeTakeFirst();
      return row && workflowOf(row);
    },

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

    /** The request of an input step in a super step, asked once (a resumed super step finds it). */
    async ask(run: WorkflowRunRow, superStep: number, stepId: string, prompt: string): Promise<WorkflowRequest> {
      await db
        .insertInto('workflow_requests')
        .values({
          id: randomUUID(),
          run_id: run.id,
          super_step: superStep,
          step_id: stepId,
          prompt: cipher.seal(run.tenantId, 'RunEventData', prompt),
          status: 'Pending',
          answer: null,
        })
        .onConflict((conflict) => conflict.columns(['run_id', 'super_step', 'step_id']).doNothing())
        .execute();
      const row = await db
        .selectFrom('workflow_requests')
        .selectAll()
        .where('run_id', '=', run.id)
        .where('super_step', '=', superStep)
        .where('step_id', '=', stepId)
        .executeTakeFirstOrThrow();
      return this.requestOf(run.tenantId, row);
    },

    async requests(tenantId: string, runId: string): Promise<WorkflowRequest[]> {
      const rows = await db.selectFrom('workflow_requests').selectAll().where('run_id', '=', runId).orderBy('created_at').execute();
      return rows.map((row) => this.requestOf(tenantId, row));
    },

    requestOf(tenantId: string, row: Omit<RunDatabase['workflow_requests'], 'created_at'> & { created_at: Date }): WorkflowRequest {
      return {
        id: row.id,
        stepId: row.step_id,
        superStep: row.super_step,
        prompt: cipher.open(tenantId, 'RunEventData', row.prompt),
        status: row.status,
        answer: row.answer === null ? null : open(tenantId, row.answer),
        answeredBy: row.answered_by,
        createdAt: row.created_at,
        answeredAt: row.answered_at,
      };
    },

    /**
     * Answers a pending request; when it was the last pending one of a waiting run, the run is
     * ready again (and goes back to Running), in the same transaction. Undefined when the request
     * was not pending (answered before).
     */
    async answer(
      tenantId: string,
      runId: string,
      requestId: string,
      answer: unknown,
      answeredBy: string,
    ): Promise<{ ready: boolean } | undefined> {
      return db.transaction().execute(async (trx) => {
        // The run's row first: answers of the same run (and its pause) take turns, so the last one sees every other.
        await trx.selectFrom('workflow_runs').select('run_id').where('run_id', '=', runId).forUpdate().execute();
        const answered = await trx
          .updateTable('workflow_requests')
          .set({ status: 'Answered', answer: seal(tenantId, answer), answered_by: answeredBy, answered_at: sql`now()` })
          .where('id', '=', requestId)
          .where('run_id', '=', runId)
          .where('status', '=', 'Pending')
          .executeTakeFirst();
        if (answered.numUpdatedRows === 0n) return undefined;
        const pending = await trx
          .selectFrom('workflow_requests')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('run_id', '=', runId)
          .where('status', '=', 'Pending')
          .executeTakeFirstOrThrow();
        if (pending.n > 0) return { ready: false };
        const woken = await trx
          .updateTable('workflow_runs')
          .set({ phase: 'ready', updated_at: sql`now()` })
          .where('run_id', '=', runId)
          .where('phase', '=', 'waiting')
          .executeTakeFirst();
        if (woken.numUpdatedRows > 0n)
          await trx
            .updateTable('runs')
            .set({ status: RUN_STATUSES.indexOf('Running') })
            .where('id', '=', runId)
            .where('status', '=', RUN_STATUSES.indexOf('AwaitingApproval'))
            .execute();
        return { ready: woken.numUpdatedRows > 0n };
      });
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
      return taken.numUpdatedRows > 0n ? this.getRun(tenantId, runId) : undefined;
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
        usage: {
          inputTokens: Number(row.input_tokens),
          outputTokens: Number(row.output_tokens),
          cachedInputTokens: Number(row.cached_input_tokens),
          reasoningTokens: Number(row.reasoning_tokens),
          totalTokens: Number(row.total_tokens),
        },
        cost:
          row.total_cost === null
            ? null
            : { input: null, output: null, cachedInput: null, total: Number(row.total_cost), currency: row.currency ?? 'USD' },
      };
    },
  };
}

export type WorkflowRepository = ReturnType<typeof createWorkflowRepository>;

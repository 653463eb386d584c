import { randomUUID } from 'node:crypto';
import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { RUN_STATUSES } from '../runs/run.model.js';
import type { WorkflowRequest, WorkflowRunRow } from './workflow.model.js';
import { workflowContent } from './workflow-content.js';

type RequestRow = Omit<RunDatabase['workflow_requests'], 'created_at'> & { created_at: Date };

/** Human-input requests of workflow runs: asked once per step and super step, answered once. */
export function createWorkflowRequestStore(db: Kysely<RunDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const { seal, open } = workflowContent(cipher);
  const requestOf = (tenantId: string, row: RequestRow): WorkflowRequest => ({
    id: row.id,
    stepId: row.step_id,
    superStep: row.super_step,
    prompt: cipher.open(tenantId, 'RunEventData', row.prompt),
    status: row.status,
    answer: row.answer === null ? null : open(tenantId, row.answer),
    answeredBy: row.answered_by,
    createdAt: row.created_at,
    answeredAt: row.answered_at,
  });

  return {
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
      return requestOf(run.tenantId, row);
    },

    async requests(tenantId: string, runId: string): Promise<WorkflowRequest[]> {
      const rows = await db.selectFrom('workflow_requests').selectAll().where('run_id', '=', runId).orderBy('created_at').execute();
      return rows.map((row) => requestOf(tenantId, row));
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
  };
}

import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type ExpressionBuilder, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { RUN_STATUSES } from '../runs/run.model.js';
import type { ApprovalRow } from './approval.model.js';

const toApproval = (row: Omit<RunDatabase['run_approvals'], 'created_at'> & { created_at: Date }): ApprovalRow => ({
  id: row.id,
  runId: row.run_id,
  toolCallId: row.tool_call_id,
  toolName: row.tool_name,
  args: row.args,
  status: row.status,
  decidedBy: row.decided_by,
  comment: row.comment,
  createdAt: row.created_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  decidedAt: row.decided_at?.toISOString() ?? null,
});

type ApprovalRecord = Parameters<typeof toApproval>[0];

/**
 * Tool calls waiting for a human decision (`run_approvals`). A call's arguments are sealed with
 * `cipher` when content protection is on, under the tenant of its run.
 */
export function createApprovalRepository(db: Kysely<RunDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const opened = (row: ApprovalRecord & { tenant_id: string | null }) =>
    toApproval({ ...row, args: cipher.openJson(row.tenant_id ?? '', 'ApprovalArguments', row.args) });
  const tenantOfRun = (eb: ExpressionBuilder<RunDatabase, 'run_approvals'>) =>
    eb.selectFrom('runs').select('runs.tenant_id').whereRef('runs.id', '=', 'run_approvals.run_id').as('tenant_id');
  return {
    /** Asks for decisions on tool calls: the approvals (Pending) and the run's status, together. */
    async requestApprovals(
      runId: string,
      calls: Array<{ id: string; toolCallId: string; toolName: string; args: unknown }>,
      expiresInMs: number,
    ): Promise<ApprovalRow[]> {
      return db.transaction().execute(async (trx) => {
        const run = await trx.selectFrom('runs').select('tenant_id').where('id', '=', runId).executeTakeFirstOrThrow();
        const rows = await trx
          .insertInto('run_approvals')
          .values(
            calls.map((call) => ({
              id: call.id,
              run_id: runId,
              tool_call_id: call.toolCallId,
              tool_name: call.toolName,
              args: jsonb(cipher.sealJson(run.tenant_id, 'ApprovalArguments', call.args)),
              status: 'Pending' as const,
              decided_by: null,
              comment: null,
              expires_at: sql<Date>`now() + ${`${expiresInMs} milliseconds`}::interval`,
              decided_at: null,
            })),
          )
          .returningAll()
          .execute();
        await trx
          .updateTable('runs')
          .set({ status: RUN_STATUSES.indexOf('AwaitingApproval') })
          .where('id', '=', runId)
          .execute();
        return rows.map((row) => opened({ ...row, tenant_id: run.tenant_id }));
      });
    },

    async approvals(runId: string, ids?: string[]): Promise<ApprovalRow[]> {
      const rows = await db
        .selectFrom('run_approvals')
        .selectAll()
        .select(tenantOfRun)
        .where('run_id', '=', runId)
        .$if(ids !== undefined, (query) => query.where('id', 'in', ids!))
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(opened);
    },

    /** Decides a pending approval; undefined when it is not pending any more. */
    async decideApproval(runId: string, approvalId: string, decision: { approved: boolean; decidedBy: string; comment: string | null }) {
      const row = await db
        .updateTable('run_approvals')
        .set({
          status: decision.approved ? 'Approved' : 'Denied',
          decided_by: decision.decidedBy,
          comment: decision.comment,
          decided_at: sql`now()`,
        })
        .where('run_id', '=', runId)
        .where('id', '=', approvalId)
        .where('status', '=', 'Pending')
        .returningAll()
        .returning(tenantOfRun)
        .executeTakeFirst();
      return row && opened(row);
    },

    /** Marks pending approvals past their expiry as Expired; returns them. */
    async expireApprovals(limit: number): Promise<ApprovalRow[]> {
      const rows = await db
        .updateTable('run_approvals')
        .set({ status: 'Expired', decided_at: sql`now()` })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('run_approvals')
            .select('id')
            .where('status', '=', 'Pending')
            .where('expires_at', '<=', sql<Date>`now()`)
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returningAll()
        .returning(tenantOfRun)
        .execute();
      return rows.map(opened);
    },
  };
}

export type ApprovalRepository = ReturnType<typeof createApprovalRepository>;

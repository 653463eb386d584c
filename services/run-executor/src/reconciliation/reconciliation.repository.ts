import type { ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import type { RunEventRow, RunEventTarget } from '../events/event.model.js';
import { insertEvents, lastSeq } from '../events/event.repository.js';
import { RUN_STATUSES } from '../runs/run.model.js';

export interface ClaimedOrphans {
  failed: string[];
  continued: Array<{ runId: string; payload: unknown; attempt: number }>;
  /** The events the claims stored (for an event log fed without the outbox). */
  stored: Array<{ target: RunEventTarget; event: RunEventRow }>;
}

/** What restarting an interactive run needs (`run_continuations`), and claiming orphaned runs. */
export function createReconciliationRepository(db: Kysely<RunDatabase>, options: { outbox: boolean; cipher?: ContentCipher }) {
  return {
    /** Keeps what restarting a root interactive run needs until it ends (RunContinuation). */
    async saveContinuation(runId: string, payload: unknown) {
      await db
        .insertInto('run_continuations')
        .values({ run_id: runId, payload: jsonb(payload) })
        .onConflict((conflict) => conflict.column('run_id').doNothing())
        .execute();
    },

    async dropContinuation(runId: string) {
      await db.deleteFrom('run_continuations').where('run_id', '=', runId).execute();
    },

    /**
     * Interactive runs still `Running` whose executing process stopped beating (queued runs are the
     * job leases' business). Each is claimed in one transaction: one with a continuation left
     * (fewer than `maxContinuations` restarts so far) gets a fresh beat, a `run.continued` event and
     * is returned for this process to restart; the others end `Failed` / `orphaned` with a
     * `run.failed` event after their last one.
     */
    async claimOrphans(thresholdMs: number, limit: number, maxContinuations: number): Promise<ClaimedOrphans> {
      return db.transaction().execute(async (trx) => {
        const orphans = await trx
          .selectFrom('runs')
          .leftJoin('run_continuations', 'run_continuations.run_id', 'runs.id')
          .select([
            'runs.id',
            'runs.tenant_id',
            'runs.root_run_id',
            'runs.agent_name',
            'run_continuations.payload',
            'run_continuations.attempts',
          ])
          .where('runs.status', 'in', [RUN_STATUSES.indexOf('Running'), RUN_STATUSES.indexOf('AwaitingApproval')])
          .where('runs.kind', 'not in', ['Async', 'Workflow'])
          .where(sql<boolean>`coalesce(runs.heartbeat_at, runs.started_at) < now() - ${`${thresholdMs} milliseconds`}::interval`)
          .limit(limit)
          .forUpdate(['runs'])
          .skipLocked()
          .execute();
        const failed: string[] = [];
        const continued: ClaimedOrphans['continued'] = [];
        const stored: ClaimedOrphans['stored'] = [];
        for (const orphan of orphans) {
          const seq = (await lastSeq(trx, orphan.id)) + 1;
          const target = { runId: orphan.id, rootRunId: orphan.root_run_id, tenantId: orphan.tenant_id, agentName: orphan.agent_name };
          // Whoever waited for these decisions is gone; a restarted run asks again.
          await trx
            .updateTable('run_approvals')
            .set({ status: 'Expired', decided_at: sql`now()` })
            .where('run_id', '=', orphan.id)
            .where('status', '=', 'Pending')
            .execute();
          if (orphan.payload !== null && orphan.attempts !== null && orphan.attempts < maxContinuations) {
            const attempt = orphan.attempts + 1;
            await trx.updateTable('run_continuations').set({ attempts: attempt }).where('run_id', '=', orphan.id).execute();
            await trx
              .updateTable('runs')
              .set({ heartbeat_at: sql`now()` })
              .where('id', '=', orphan.id)
              .execute();
            const [event] = await insertEvents(
              trx,
              target,
              [{ seq, type: 'run.continued', data: { attempt, reason: 'orphaned' } }],
              options.outbox,
              options.cipher,
            );
            stored.push({ target, event });
            continued.push({ runId: orphan.id, payload: orphan.payload, attempt });
            continue;
          }
          await trx
            .updateTable('runs')
            .set({
              status: RUN_STATUSES.indexOf('Failed'),
              completed_at: sql`now()`,
              error_type: 'orphaned',
              error_message: 'the process executing this run stopped',
            })
            .where('id', '=', orphan.id)
            .execute();
          const [event] = await insertEvents(
            trx,
            target,
            [{ seq, type: 'run.failed', data: { errorType: 'orphaned', message: 'the process executing this run stopped' } }],
            options.outbox,
            options.cipher,
          );
          stored.push({ target, event });
          failed.push(orphan.id);
        }
        return { failed, continued, stored };
      });
    },
  };
}

export type ReconciliationRepository = ReturnType<typeof createReconciliationRepository>;

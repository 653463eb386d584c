import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { RUN_STATUSES, type NewRun, type RunRow } from '../runs/run.model.js';
import { insertRun, toRun, type Selected } from '../runs/run.repository.js';

export interface LeasedJob {
  id: string;
  tenantId: string;
  runId: string;
  lane: string;
  payload: unknown;
  attempts: number;
}

/** Queued runs' jobs and their leases (`jobs`). */
export function createJobRepository(db: Kysely<RunDatabase>) {
  return {
    /** A queued run: its row (status Queued) and its job, together. */
    async enqueue(tenantId: string, run: NewRun, payload: unknown, lane: string): Promise<RunRow> {
      return db.transaction().execute(async (trx) => {
        const inserted = await insertRun(trx, tenantId, run, 'Queued');
        await trx
          .insertInto('jobs')
          .values({
            id: run.id,
            tenant_id: tenantId,
            run_id: run.id,
            lane,
            payload: jsonb(payload),
            status: 'queued',
            lease_owner: null,
            lease_expires_at: null,
            last_error: null,
          })
          .execute();
        return inserted;
      });
    },

    /**
     * Leases up to `limit` jobs that are queued or whose lease expired (a worker that died), skipping
     * rows another worker is leasing right now.
     */
    async leaseJobs(
      owner: string,
      limit: number,
      leaseMs: number,
      lanes: { only?: string[]; except?: string[] } = {},
    ): Promise<LeasedJob[]> {
      if (limit <= 0 || lanes.only?.length === 0) return [];
      const rows = await db
        .updateTable('jobs')
        .set({
          status: 'leased',
          lease_owner: owner,
          lease_expires_at: sql`now() + ${`${leaseMs} milliseconds`}::interval`,
          attempts: sql`attempts + 1`,
          updated_at: sql`now()`,
        })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('jobs')
            .select('id')
            .where((where) =>
              where.or([
                where('status', '=', 'queued'),
                where.and([where('status', '=', 'leased'), where('lease_expires_at', '<', sql<Date>`now()`)]),
              ]),
            )
            .$if(lanes.only !== undefined, (query) => query.where('lane', 'in', lanes.only!))
            .$if(!!lanes.except?.length, (query) => query.where('lane', 'not in', lanes.except!))
            .orderBy('created_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning(['id', 'tenant_id', 'run_id', 'lane', 'payload', 'attempts'])
        .execute();
      return rows.map((row) => ({
        id: row.id,
        tenantId: row.tenant_id,
        runId: row.run_id,
        lane: row.lane,
        payload: row.payload,
        attempts: row.attempts,
      }));
    },

    /** Extends a lease this worker still holds; false when it lost it. */
    async heartbeat(jobId: string, owner: string, leaseMs: number): Promise<boolean> {
      const result = await db
        .updateTable('jobs')
        .set({ lease_expires_at: sql`now() + ${`${leaseMs} milliseconds`}::interval`, updated_at: sql`now()` })
        .where('id', '=', jobId)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'leased')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async finishJob(jobId: string, status: 'done' | 'failed', error: string | null) {
      await db
        .updateTable('jobs')
        .set({ status, last_error: error, lease_owner: null, lease_expires_at: null, updated_at: sql`now()` })
        .where('id', '=', jobId)
        .execute();
    },

    /** Cancels a queued run whose job no worker has leased yet; undefined when one already has. */
    async cancelQueued(runId: string): Promise<RunRow | undefined> {
      return db.transaction().execute(async (trx) => {
        const job = await trx
          .updateTable('jobs')
          .set({ status: 'done', last_error: 'canceled', updated_at: sql`now()` })
          .where('run_id', '=', runId)
          .where('status', '=', 'queued')
          .returning('id')
          .executeTakeFirst();
        if (!job) return undefined;
        const row = await trx
          .updateTable('runs')
          .set({
            status: RUN_STATUSES.indexOf('Canceled'),
            completed_at: sql`now()`,
            // A canceled run has not failed: no error type (SPEC "Read view").
            error_type: null,
            error_message: null,
          })
          .where('id', '=', runId)
          .returningAll()
          .executeTakeFirstOrThrow();
        return toRun(row as Selected);
      });
    },
  };
}

export type JobRepository = ReturnType<typeof createJobRepository>;

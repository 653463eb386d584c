import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { RUN_STATUSES, TERMINAL_STATUSES, type NewRun, type RunRow } from '../runs/run.model.js';
import { insertRun, insertTerminalEvent, toRun, type RunEnding, type Selected, type TerminalEvent } from '../runs/run.repository.js';

export interface LeasedJob {
  id: string;
  tenantId: string;
  runId: string;
  lane: string;
  payload: unknown;
  attempts: number;
  /** Leases taken beyond this mean its workers died that often: the run is abandoned. Null: the worker's default. */
  maxAttempts: number | null;
}

/** What a worker needs to execute a queued run, beside its run row. */
export interface NewJob {
  payload: unknown;
  lane: string;
  maxAttempts: number;
}

/** A Queued run row and its job, in the caller's transaction (a schedule's firing writes more beside them). */
export async function insertQueuedRun(trx: Kysely<RunDatabase>, tenantId: string, run: NewRun, job: NewJob): Promise<RunRow> {
  const inserted = await insertRun(trx, tenantId, run, 'Queued');
  await trx
    .insertInto('jobs')
    .values({
      id: run.id,
      tenant_id: tenantId,
      run_id: run.id,
      lane: job.lane,
      payload: jsonb(job.payload),
      status: 'queued',
      lease_owner: null,
      lease_expires_at: null,
      last_error: null,
      max_attempts: job.maxAttempts,
    })
    .execute();
  return inserted;
}

/** Queued runs' jobs and their leases (`jobs`); `outbox` and `cipher` as the event repository's, for a canceled run's terminal event. */
export function createJobRepository(
  db: Kysely<RunDatabase>,
  options: { outbox: boolean; cipher: ContentCipher } = { outbox: false, cipher: PLAIN_CONTENT },
) {
  return {
    /** A queued run: its row (status Queued) and its job, together. */
    async enqueue(tenantId: string, run: NewRun, job: NewJob): Promise<RunRow> {
      return db.transaction().execute((trx) => insertQueuedRun(trx, tenantId, run, job));
    },

    /**
     * Leases up to `limit` jobs that are queued or whose lease expired (a worker that died), skipping
     * rows another worker is leasing right now. Tenants take turns: a job's turn is its place in its
     * tenant's queue plus the jobs that tenant has running, so one tenant's backlog never goes before
     * another tenant's first job.
     */
    async leaseJobs(
      owner: string,
      limit: number,
      leaseMs: number,
      lanes: { only?: string[]; except?: string[] } = {},
    ): Promise<LeasedJob[]> {
      if (limit <= 0 || lanes.only?.length === 0) return [];
      const rows = await db
        .with('ranked', (qb) =>
          qb
            .selectFrom('jobs as j')
            .select((eb) => [
              'j.id',
              'j.created_at',
              sql<number>`row_number() over (partition by ${eb.ref('j.tenant_id')} order by ${eb.ref('j.created_at')}) + ${eb
                .selectFrom('jobs as running')
                .select(eb.fn.countAll().as('n'))
                .whereRef('running.tenant_id', '=', 'j.tenant_id')
                .where('running.status', '=', 'leased')
                .where('running.lease_expires_at', '>=', sql<Date>`now()`)}`.as('turn'),
            ])
            .where((where) =>
              where.or([
                where('j.status', '=', 'queued'),
                where.and([where('j.status', '=', 'leased'), where('j.lease_expires_at', '<', sql<Date>`now()`)]),
              ]),
            )
            .$if(lanes.only !== undefined, (query) => query.where('j.lane', 'in', lanes.only!))
            .$if(!!lanes.except?.length, (query) => query.where('j.lane', 'not in', lanes.except!))
            .orderBy('turn')
            .orderBy('j.created_at')
            // A few more than wanted, so rows another worker holds can be skipped.
            .limit(limit * 4),
        )
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
            .selectFrom('jobs as candidate')
            .innerJoin('ranked', 'ranked.id', 'candidate.id')
            .select('candidate.id')
            // Checked again on the row as it is once locked: a job another worker leased meanwhile drops out.
            .where((where) =>
              where.or([
                where('candidate.status', '=', 'queued'),
                where.and([where('candidate.status', '=', 'leased'), where('candidate.lease_expires_at', '<', sql<Date>`now()`)]),
              ]),
            )
            .orderBy('ranked.turn')
            .orderBy('ranked.created_at')
            .limit(limit)
            .forUpdate('candidate')
            .skipLocked(),
        )
        .returning(['id', 'tenant_id', 'run_id', 'lane', 'payload', 'attempts', 'max_attempts'])
        .execute();
      return rows.map((row) => ({
        id: row.id,
        tenantId: row.tenant_id,
        runId: row.run_id,
        lane: row.lane,
        payload: row.payload,
        attempts: row.attempts,
        maxAttempts: row.max_attempts,
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

    /**
     * Gives a job this worker holds back to the queue, with the attempt it used (its worker is
     * stopping; nothing failed), and shows its run as Queued again unless it ended meanwhile.
     */
    async releaseJob(jobId: string, owner: string) {
      await db.transaction().execute(async (trx) => {
        const job = await trx
          .updateTable('jobs')
          .set({
            status: 'queued',
            lease_owner: null,
            lease_expires_at: null,
            attempts: sql`greatest(attempts - 1, 0)`,
            updated_at: sql`now()`,
          })
          .where('id', '=', jobId)
          .where('lease_owner', '=', owner)
          .where('status', '=', 'leased')
          .returning('run_id')
          .executeTakeFirst();
        if (!job) return;
        await trx
          .updateTable('runs')
          .set({ status: RUN_STATUSES.indexOf('Queued') })
          .where('id', '=', job.run_id)
          .where(
            'status',
            'not in',
            [...TERMINAL_STATUSES].map((status) => RUN_STATUSES.indexOf(status)),
          )
          .execute();
      });
    },

    /** Jobs waiting for a worker (a leased one is not waiting), per lane. */
    async queuedByLane(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('jobs')
        .select(['lane', (eb) => eb.fn.countAll<string>().as('queued')])
        .where('status', '=', 'queued')
        .groupBy('lane')
        .execute();
      return Object.fromEntries(rows.map((row) => [row.lane, Number(row.queued)]));
    },

    /**
     * Cancels a queued run whose job no worker has leased yet, with its terminal event (none without
     * recording) in the same transaction; undefined when a worker has leased it already.
     */
    async cancelQueued(runId: string, terminal: TerminalEvent | undefined): Promise<(Partial<RunEnding> & { run: RunRow }) | undefined> {
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
        const run = toRun(row as Selected);
        return terminal ? { run, ...(await insertTerminalEvent(trx, row, terminal, options)) } : { run };
      });
    },
  };
}

export type JobRepository = ReturnType<typeof createJobRepository>;

import { jsonb, sql, type Generated, type Kysely } from '@hangar/storage';

export const RUN_STATUSES = ['Queued', 'Running', 'Completed', 'Failed', 'Canceled', 'AwaitingApproval'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const RUN_KINDS = ['Interactive', 'Async', 'Child', 'Scheduled', 'Evaluation', 'Replay', 'Compatibility'] as const;
export type RunKind = (typeof RUN_KINDS)[number];
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['Completed', 'Failed', 'Canceled']);

type Numeric = string | number | bigint;

export interface RunDatabase {
  runs: {
    id: string;
    tenant_id: string;
    agent_name: string;
    agent_version: number | null;
    session_id: string | null;
    status: number;
    kind: string;
    is_streaming: boolean;
    started_at: Generated<Date>;
    completed_at: Date | null;
    input_tokens: Generated<Numeric>;
    output_tokens: Generated<Numeric>;
    cached_input_tokens: Generated<Numeric>;
    reasoning_tokens: Generated<Numeric>;
    total_tokens: Generated<Numeric>;
    input_cost: Numeric | null;
    output_cost: Numeric | null;
    cached_input_cost: Numeric | null;
    total_cost: Numeric | null;
    cost_currency: string | null;
    input_price_per_mtok: Numeric | null;
    output_price_per_mtok: Numeric | null;
    cached_input_price_per_mtok: Numeric | null;
    model_provider: string | null;
    model: string | null;
    error_type: string | null;
    error_message: string | null;
    parent_run_id: string | null;
    root_run_id: string;
    depth: Generated<number>;
    user_id: string | null;
    labels: Generated<Record<string, string>>;
    heartbeat_at: Date | null;
  };
  run_events: { run_id: string; seq: number; type: string; at: Generated<Date>; data: unknown };
  run_event_outbox: { id: Generated<string>; root_run_id: string; payload: unknown };
  run_approvals: {
    id: string;
    run_id: string;
    tool_call_id: string;
    tool_name: string;
    args: unknown;
    status: ApprovalStatus;
    decided_by: string | null;
    comment: string | null;
    created_at: Generated<Date>;
    expires_at: Date;
    decided_at: Date | null;
  };
  run_inputs: { run_id: string; input: unknown; recorded_at: Generated<Date> };
  run_continuations: { run_id: string; payload: unknown; attempts: Generated<number>; created_at: Generated<Date> };
  jobs: {
    id: string;
    tenant_id: string;
    run_id: string;
    lane: Generated<string>;
    payload: unknown;
    status: 'queued' | 'leased' | 'done' | 'failed';
    attempts: Generated<number>;
    lease_owner: string | null;
    lease_expires_at: Date | null;
    last_error: string | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  run_scores: {
    id: string;
    run_id: string;
    message_key: string;
    name: string;
    kind: string;
    value: number | null;
    text_value: string | null;
    source: string;
    author: string;
    comment: string | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
}

export interface LeasedJob {
  id: string;
  tenantId: string;
  runId: string;
  lane: string;
  payload: unknown;
  attempts: number;
}

export type ApprovalStatus = 'Pending' | 'Approved' | 'Denied' | 'Expired';

export interface ApprovalRow {
  id: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
  status: ApprovalStatus;
  decidedBy: string | null;
  comment: string | null;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
}

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

export interface ScoreRow {
  id: string;
  runId: string;
  messageId: string | null;
  name: string;
  kind: string;
  value: number | null;
  textValue: string | null;
  source: string;
  author: string;
  comment: string | null;
  createdAt: string;
  updatedAt: string;
}

const toScore = (row: Omit<RunDatabase['run_scores'], 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date }): ScoreRow => ({
  id: row.id,
  runId: row.run_id,
  messageId: row.message_key || null,
  name: row.name,
  kind: row.kind,
  value: row.value === null ? null : Number(row.value),
  textValue: row.text_value,
  source: row.source,
  author: row.author,
  comment: row.comment,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  totalTokens: number;
}

export interface Cost {
  input: number | null;
  output: number | null;
  cachedInput: number | null;
  total: number;
  currency: string;
}

export interface PriceSnapshot {
  input: number | null;
  output: number | null;
  cachedInput: number | null;
}

export interface RunRow {
  id: string;
  agentName: string;
  agentVersion: number | null;
  sessionId: string | null;
  status: RunStatus;
  kind: RunKind;
  isStreaming: boolean;
  startedAt: string;
  completedAt: string | null;
  durationMs: number | null;
  usage: Usage;
  cost: Cost | null;
  modelProvider: string | null;
  model: string | null;
  errorType: string | null;
  errorMessage: string | null;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  userId: string | null;
  labels: Record<string, string>;
}

export interface RunEventRow {
  seq: number;
  runId: string;
  type: string;
  at: string;
  data: Record<string, unknown>;
}

export interface RunFilter {
  agentName?: string;
  status?: RunStatus;
  kind?: RunKind;
  sessionId?: string;
  errorType?: string;
  userId?: string;
  /** `key:value`, or a bare `key` matching any value. */
  label?: string;
  startedAfter?: string;
  includeChildren: boolean;
  parentRunId?: string;
  rootRunId?: string;
  skip: number;
  take: number;
}

const num = (value: Numeric | null) => (value === null ? null : Number(value));

type Selected = RunDatabase['runs'] & {
  started_at: Date;
  input_tokens: Numeric;
  output_tokens: Numeric;
  cached_input_tokens: Numeric;
  reasoning_tokens: Numeric;
  total_tokens: Numeric;
  depth: number;
  labels: Record<string, string>;
};

function toRun(row: Selected): RunRow {
  const completedAt = row.completed_at;
  return {
    id: row.id,
    agentName: row.agent_name,
    agentVersion: row.agent_version,
    sessionId: row.session_id,
    status: RUN_STATUSES[row.status],
    kind: row.kind as RunKind,
    isStreaming: row.is_streaming,
    startedAt: row.started_at.toISOString(),
    completedAt: completedAt ? completedAt.toISOString() : null,
    durationMs: completedAt ? completedAt.getTime() - row.started_at.getTime() : null,
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
        : {
            input: num(row.input_cost),
            output: num(row.output_cost),
            cachedInput: num(row.cached_input_cost),
            total: Number(row.total_cost),
            currency: row.cost_currency ?? 'USD',
          },
    modelProvider: row.model_provider,
    model: row.model,
    errorType: row.error_type,
    errorMessage: row.error_message,
    parentRunId: row.parent_run_id,
    rootRunId: row.root_run_id,
    depth: row.depth,
    userId: row.user_id,
    labels: row.labels,
  };
}

export interface NewRun {
  id: string;
  agentName: string;
  agentVersion: number | null;
  sessionId: string | null;
  kind: RunKind;
  isStreaming: boolean;
  rootRunId: string;
  parentRunId: string | null;
  depth: number;
  userId: string | null;
  labels: Record<string, string>;
}

async function insertRun(db: Kysely<RunDatabase>, tenantId: string, run: NewRun, status: RunStatus): Promise<RunRow> {
  const row = await db
    .insertInto('runs')
    .values({
      id: run.id,
      tenant_id: tenantId,
      agent_name: run.agentName,
      agent_version: run.agentVersion,
      session_id: run.sessionId,
      status: RUN_STATUSES.indexOf(status),
      kind: run.kind,
      is_streaming: run.isStreaming,
      root_run_id: run.rootRunId,
      parent_run_id: run.parentRunId,
      depth: run.depth,
      user_id: run.userId,
      labels: jsonb(run.labels),
      completed_at: null,
      input_cost: null,
      output_cost: null,
      cached_input_cost: null,
      total_cost: null,
      cost_currency: null,
      input_price_per_mtok: null,
      output_price_per_mtok: null,
      cached_input_price_per_mtok: null,
      model_provider: null,
      model: null,
      error_type: null,
      error_message: null,
      heartbeat_at: sql`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRun(row as Selected);
}

/** Where a run event belongs: its run, the tree's root (the event log's key) and the tenant. */
export interface RunEventTarget {
  runId: string;
  rootRunId: string;
  tenantId: string;
  agentName: string;
}

export interface NewRunEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Stores events of one run and queues them for the event log in one statement, so nothing is
 * shipped that was not stored. The outbox entry is the envelope consumers read: tenant, run, root,
 * agent, seq, type, time and data.
 */
async function insertEvents(db: Kysely<RunDatabase>, target: RunEventTarget, events: NewRunEvent[]): Promise<RunEventRow[]> {
  const rows = await db
    .with('stored', (qb) =>
      qb
        .insertInto('run_events')
        .values(events.map(({ seq, type, data }) => ({ run_id: target.runId, seq, type, data: jsonb(data) })))
        .returningAll(),
    )
    .with('queued', (qb) =>
      qb
        .insertInto('run_event_outbox')
        .columns(['root_run_id', 'payload'])
        .expression((eb) =>
          eb
            .selectFrom('stored')
            .select([
              sql<string>`${target.rootRunId}::uuid`.as('root_run_id'),
              sql<unknown>`jsonb_build_object('tenantId', ${target.tenantId}::text, 'runId', stored.run_id, 'rootRunId', ${target.rootRunId}::text, 'agentName', ${target.agentName}::text, 'seq', stored.seq, 'type', stored.type, 'at', stored.at, 'data', stored.data)`.as(
                'payload',
              ),
            ])
            // Outbox ids follow the sequence, so the relay ships a run's events in order.
            .orderBy('stored.seq'),
        ),
    )
    .selectFrom('stored')
    .selectAll()
    .orderBy('seq')
    .execute();
  return rows.map(toEvent);
}

const toEvent = (row: { seq: number; run_id: string; type: string; at: Date; data: unknown }): RunEventRow => ({
  seq: row.seq,
  runId: row.run_id,
  type: row.type,
  at: row.at.toISOString(),
  data: row.data as Record<string, unknown>,
});

/** The sequence of a run's last event, 0 when it has none. */
async function lastSeq(db: Kysely<RunDatabase>, runId: string): Promise<number> {
  const last = await db
    .selectFrom('run_events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return Number(last?.seq ?? 0);
}

/** Where SPEC puts the read view: `{schema}.runs_v1`, or `{prefix}runs_v1` on the embedded store. */
export interface ReadViewTarget {
  schema: string;
  name: string;
}

/** Every SQL statement of the run executor. */
export function createRunRepository(db: Kysely<RunDatabase>, runsSchema: string) {
  return {
    /**
     * The published `runs_v1` contract (SPEC "Read view"): metadata only, exactly SPEC's columns,
     * `total_cost` the very column the run record reports. Without the option no such object exists.
     */
    async applyReadView(target: ReadViewTarget, enabled: boolean) {
      const view = sql`${sql.id(target.schema)}.${sql.id(target.name)}`;
      if (!enabled) {
        await sql`drop view if exists ${view}`.execute(db);
        return;
      }
      await sql`create schema if not exists ${sql.id(target.schema)}`.execute(db);
      await sql`
        create or replace view ${view} as
        select
          r.id as run_id,
          r.tenant_id,
          r.agent_name,
          r.session_id,
          r.status,
          (array['Queued','Running','Completed','Failed','Canceled','AwaitingApproval'])[r.status + 1] as status_name,
          (r.started_at at time zone 'UTC') as started_at,
          (r.completed_at at time zone 'UTC') as completed_at,
          r.is_streaming,
          r.input_tokens,
          r.output_tokens,
          r.cached_input_tokens,
          r.reasoning_tokens,
          r.total_tokens,
          r.input_cost,
          r.output_cost,
          r.cached_input_cost,
          r.total_cost,
          r.cost_currency,
          r.error_type,
          r.model_provider,
          r.input_price_per_mtok,
          r.output_price_per_mtok,
          r.cached_input_price_per_mtok
        from ${sql.id(runsSchema)}.runs r`.execute(db);
    },

    insert: (tenantId: string, run: NewRun, status: RunStatus = 'Running') => insertRun(db, tenantId, run, status),

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

    /** Asks for decisions on tool calls: the approvals (Pending) and the run's status, together. */
    async requestApprovals(
      runId: string,
      calls: Array<{ id: string; toolCallId: string; toolName: string; args: unknown }>,
      expiresInMs: number,
    ): Promise<ApprovalRow[]> {
      return db.transaction().execute(async (trx) => {
        const rows = await trx
          .insertInto('run_approvals')
          .values(
            calls.map((call) => ({
              id: call.id,
              run_id: runId,
              tool_call_id: call.toolCallId,
              tool_name: call.toolName,
              args: jsonb(call.args),
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
        return rows.map(toApproval);
      });
    },

    async approvals(runId: string, ids?: string[]): Promise<ApprovalRow[]> {
      const rows = await db
        .selectFrom('run_approvals')
        .selectAll()
        .where('run_id', '=', runId)
        .$if(ids !== undefined, (query) => query.where('id', 'in', ids!))
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toApproval);
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
        .executeTakeFirst();
      return row && toApproval(row);
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
        .execute();
      return rows.map(toApproval);
    },

    async setStatus(runId: string, status: RunStatus) {
      await db
        .updateTable('runs')
        .set({ status: RUN_STATUSES.indexOf(status) })
        .where('id', '=', runId)
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
            error_type: 'canceled',
            error_message: 'the run was canceled',
          })
          .where('id', '=', runId)
          .returningAll()
          .executeTakeFirstOrThrow();
        return toRun(row as Selected);
      });
    },

    lastSeq: (runId: string) => lastSeq(db, runId),

    async heartbeatRun(runId: string) {
      await db
        .updateTable('runs')
        .set({ heartbeat_at: sql`now()` })
        .where('id', '=', runId)
        .execute();
    },

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
    async claimOrphans(
      thresholdMs: number,
      limit: number,
      maxContinuations: number,
    ): Promise<{ failed: string[]; continued: Array<{ runId: string; payload: unknown; attempt: number }> }> {
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
          .where('runs.kind', '!=', 'Async')
          .where(sql<boolean>`coalesce(runs.heartbeat_at, runs.started_at) < now() - ${`${thresholdMs} milliseconds`}::interval`)
          .limit(limit)
          .forUpdate(['runs'])
          .skipLocked()
          .execute();
        const failed: string[] = [];
        const continued: Array<{ runId: string; payload: unknown; attempt: number }> = [];
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
            await insertEvents(trx, target, [{ seq, type: 'run.continued', data: { attempt, reason: 'orphaned' } }]);
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
          await insertEvents(trx, target, [
            { seq, type: 'run.failed', data: { errorType: 'orphaned', message: 'the process executing this run stopped' } },
          ]);
          failed.push(orphan.id);
        }
        return { failed, continued };
      });
    },

    async markRunning(runId: string): Promise<RunRow> {
      const row = await db
        .updateTable('runs')
        .set({ status: RUN_STATUSES.indexOf('Running'), started_at: sql`now()`, heartbeat_at: sql`now()` })
        .where('id', '=', runId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRun(row as Selected);
    },

    /** The first recording stands: a queued run executed again by the next worker keeps its input. */
    async recordInput(runId: string, input: unknown) {
      await db
        .insertInto('run_inputs')
        .values({ run_id: runId, input: jsonb(input) })
        .onConflict((conflict) => conflict.column('run_id').doNothing())
        .execute();
    },

    async getInput(tenantId: string, runId: string) {
      return db
        .selectFrom('run_inputs')
        .innerJoin('runs', 'runs.id', 'run_inputs.run_id')
        .select(['run_inputs.input', 'run_inputs.recorded_at'])
        .where('runs.tenant_id', '=', tenantId)
        .where('runs.id', '=', runId)
        .executeTakeFirst();
    },

    async setModel(runId: string, provider: string, model: string) {
      await db.updateTable('runs').set({ model_provider: provider, model }).where('id', '=', runId).execute();
    },

    async finish(
      runId: string,
      outcome: {
        status: RunStatus;
        usage: Usage;
        cost: Cost | null;
        prices: PriceSnapshot;
        errorType: string | null;
        errorMessage: string | null;
      },
    ): Promise<RunRow> {
      const row = await db
        .updateTable('runs')
        .set({
          status: RUN_STATUSES.indexOf(outcome.status),
          completed_at: sql`now()`,
          input_tokens: outcome.usage.inputTokens,
          output_tokens: outcome.usage.outputTokens,
          cached_input_tokens: outcome.usage.cachedInputTokens,
          reasoning_tokens: outcome.usage.reasoningTokens,
          total_tokens: outcome.usage.totalTokens,
          input_cost: outcome.cost?.input ?? null,
          output_cost: outcome.cost?.output ?? null,
          cached_input_cost: outcome.cost?.cachedInput ?? null,
          total_cost: outcome.cost?.total ?? null,
          cost_currency: outcome.cost?.currency ?? null,
          input_price_per_mtok: outcome.prices.input,
          output_price_per_mtok: outcome.prices.output,
          cached_input_price_per_mtok: outcome.prices.cachedInput,
          error_type: outcome.errorType,
          error_message: outcome.errorMessage,
        })
        .where('id', '=', runId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRun(row as Selected);
    },

    async get(tenantId: string, runId: string): Promise<RunRow | undefined> {
      const row = await db.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', runId).executeTakeFirst();
      return row && toRun(row as Selected);
    },

    async list(tenantId: string, filter: RunFilter): Promise<RunRow[]> {
      let query = db.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId);
      if (filter.agentName !== undefined) query = query.where('agent_name', '=', filter.agentName);
      if (filter.status !== undefined) query = query.where('status', '=', RUN_STATUSES.indexOf(filter.status));
      if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
      if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
      if (filter.errorType !== undefined) query = query.where('error_type', '=', filter.errorType);
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
      if (filter.startedAfter !== undefined) query = query.where('started_at', '>', new Date(filter.startedAfter));
      if (filter.parentRunId !== undefined) query = query.where('parent_run_id', '=', filter.parentRunId);
      if (filter.rootRunId !== undefined) query = query.where('root_run_id', '=', filter.rootRunId);
      if (filter.label !== undefined) {
        const separator = filter.label.indexOf(':');
        query =
          separator < 0
            ? query.where(sql<boolean>`labels ? ${filter.label}`)
            : query.where(sql<boolean>`labels ->> ${filter.label.slice(0, separator)} = ${filter.label.slice(separator + 1)}`);
      }
      const onlyRoots = !filter.includeChildren && filter.parentRunId === undefined && filter.rootRunId === undefined;
      if (onlyRoots) query = query.where('parent_run_id', 'is', null);
      const rows = await query.orderBy('started_at', 'desc').orderBy('id', 'desc').offset(filter.skip).limit(filter.take).execute();
      return rows.map((row) => toRun(row as Selected));
    },

    /** Every run of a tree, root first, then by depth and start, at most `limit`. */
    async tree(tenantId: string, rootRunId: string, limit: number): Promise<RunRow[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('root_run_id', '=', rootRunId)
        .orderBy('depth')
        .orderBy('started_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((row) => toRun(row as Selected));
    },

    /** One score per run, target, name, author and source: a second save updates it. */
    async saveScore(score: Omit<ScoreRow, 'createdAt' | 'updatedAt'>): Promise<{ score: ScoreRow; created: boolean }> {
      const row = await db
        .insertInto('run_scores')
        .values({
          id: score.id,
          run_id: score.runId,
          message_key: score.messageId ?? '',
          name: score.name,
          kind: score.kind,
          value: score.value,
          text_value: score.textValue,
          source: score.source,
          author: score.author,
          comment: score.comment,
        })
        .onConflict((conflict) =>
          conflict.columns(['run_id', 'message_key', 'name', 'author', 'source']).doUpdateSet((eb) => ({
            kind: eb.ref('excluded.kind'),
            value: eb.ref('excluded.value'),
            text_value: eb.ref('excluded.text_value'),
            comment: eb.ref('excluded.comment'),
            updated_at: sql`now()`,
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return { score: toScore(row), created: row.id === score.id };
    },

    async scores(runId: string): Promise<ScoreRow[]> {
      const rows = await db.selectFrom('run_scores').selectAll().where('run_id', '=', runId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toScore);
    },

    /** The deleted score, or undefined when there was none. */
    async deleteScore(runId: string, scoreId: string): Promise<ScoreRow | undefined> {
      const row = await db.deleteFrom('run_scores').where('run_id', '=', runId).where('id', '=', scoreId).returningAll().executeTakeFirst();
      return row && toScore(row);
    },

    appendEvents: (target: RunEventTarget, events: NewRunEvent[]) => insertEvents(db, target, events),

    /**
     * Hands up to `limit` queued events, oldest first, to `ship` and deletes them once it returns.
     * The rows stay locked meanwhile, so relays in several processes ship in turn and keep order.
     */
    async shipOutbox(limit: number, ship: (events: Array<{ key: string; value: string }>) => Promise<void>): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const rows = await trx.selectFrom('run_event_outbox').selectAll().orderBy('id').limit(limit).forUpdate().execute();
        if (!rows.length) return 0;
        await ship(rows.map((row) => ({ key: row.root_run_id, value: JSON.stringify(row.payload) })));
        await trx
          .deleteFrom('run_event_outbox')
          .where(
            'id',
            'in',
            rows.map((row) => row.id),
          )
          .execute();
        return rows.length;
      });
    },

    async events(runId: string, afterSeq: number): Promise<RunEventRow[]> {
      const rows = await db
        .selectFrom('run_events')
        .selectAll()
        .where('run_id', '=', runId)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .execute();
      return rows.map(toEvent);
    },
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;

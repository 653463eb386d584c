import { PLAIN_CONTENT, runEventColumn, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely, type QueryCreator } from '@hangar/storage';
import type { Numeric, RunDatabase } from '../database.js';
import type { RunEventRow, RunEventTarget } from '../events/event.model.js';
import { envelopeOfStored, insertEvents, lastSeq, toEvent } from '../events/event.repository.js';
import {
  RUN_STATUSES,
  TERMINAL_STATUSES,
  type NewRun,
  type RunFilter,
  type RunKind,
  type RunOutcome,
  type RunRow,
  type RunStatus,
  type Usage,
} from './run.model.js';

const num = (value: Numeric | null) => (value === null ? null : Number(value));

export type Selected = RunDatabase['runs'] & {
  started_at: Date;
  input_tokens: Numeric;
  output_tokens: Numeric;
  cached_input_tokens: Numeric;
  reasoning_tokens: Numeric;
  total_tokens: Numeric;
  depth: number;
  labels: Record<string, string>;
};

/** The token columns of a run row (or a sum of them) as a run's usage. */
type TokenColumn = 'input_tokens' | 'output_tokens' | 'cached_input_tokens' | 'reasoning_tokens' | 'total_tokens';
export const usageOfRow = (row: Record<TokenColumn, Numeric>): Usage => ({
  inputTokens: Number(row.input_tokens),
  outputTokens: Number(row.output_tokens),
  cachedInputTokens: Number(row.cached_input_tokens),
  reasoningTokens: Number(row.reasoning_tokens),
  totalTokens: Number(row.total_tokens),
});

export function toRun(row: Selected): RunRow {
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
    usage: usageOfRow(row),
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

/** What a run records with its row, in the same statement: its input and the model it tries first. */
export interface RunStartRecord {
  input?: unknown;
  model?: { provider: string; model: string };
}

export async function insertRun(
  db: Kysely<RunDatabase>,
  tenantId: string,
  run: NewRun,
  status: RunStatus,
  record: RunStartRecord = {},
): Promise<RunRow> {
  const values = {
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
    labels: jsonb<Record<string, string>>(run.labels),
    completed_at: null,
    input_cost: null,
    output_cost: null,
    cached_input_cost: null,
    total_cost: null,
    cost_currency: null,
    input_price_per_mtok: null,
    output_price_per_mtok: null,
    cached_input_price_per_mtok: null,
    model_provider: record.model?.provider ?? null,
    model: record.model?.model ?? null,
    error_type: null,
    error_message: null,
    heartbeat_at: sql<Date>`now()`,
  };
  if (record.input === undefined)
    return toRun((await db.insertInto('runs').values(values).returningAll().executeTakeFirstOrThrow()) as Selected);
  // One statement for the row and its input (the foreign key is checked at the statement's end).
  const row = await db
    .with('run', (qb) => qb.insertInto('runs').values(values).returningAll())
    .with('input', (qb) =>
      qb
        .insertInto('run_inputs')
        .columns(['run_id', 'input'])
        .expression((eb) => eb.selectFrom('run').select(['run.id', jsonb(record.input).as('input')])),
    )
    .selectFrom('run')
    .selectAll()
    .executeTakeFirstOrThrow();
  return toRun(row as Selected);
}

const ENDED = [...TERMINAL_STATUSES].map((status) => RUN_STATUSES.indexOf(status));
/** SQLSTATE of a unique constraint's refusal. */
const UNIQUE_VIOLATION = '23505';

/** Records how a run ended, unless it had ended already (the first ending stands). */
function finishRow(db: QueryCreator<RunDatabase>, runId: string, outcome: RunOutcome) {
  return db
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
    .where('status', 'not in', ENDED)
    .returningAll();
}

/** A run's terminal event, as its ending stores it. */
export interface TerminalEvent {
  type: string;
  data: Record<string, unknown>;
  /** The run span's trace context, carried to the event log. */
  traceparent?: string;
}

/** What a run's ending stored: the row, and its terminal event (where it belongs, for announcing it). */
export interface RunEnding {
  run: RunRow;
  target: RunEventTarget;
  event: RunEventRow;
}

/**
 * A run's terminal event after its last stored one, in the transaction that ends its row: a process
 * that died between two statements would leave an ended run whose event log never ends (its readers
 * wait on, and nothing writes the event later: reconciliation and job leases look only at runs that
 * have not ended).
 */
export async function insertTerminalEvent(
  trx: Kysely<RunDatabase>,
  ended: Pick<Selected, 'id' | 'root_run_id' | 'tenant_id' | 'agent_name'>,
  terminal: TerminalEvent,
  options: { outbox: boolean; cipher: ContentCipher },
): Promise<Omit<RunEnding, 'run'>> {
  const target: RunEventTarget = {
    runId: ended.id,
    rootRunId: ended.root_run_id,
    tenantId: ended.tenant_id,
    agentName: ended.agent_name,
    ...(terminal.traceparent && { traceparent: terminal.traceparent }),
  };
  const seq = (await lastSeq(trx, ended.id)) + 1;
  const [event] = await insertEvents(trx, target, [{ seq, type: terminal.type, data: terminal.data }], options.outbox, options.cipher);
  return { target, event };
}

/**
 * The `runs` table (and each run's recorded input). `outbox`: events this repository stores (a
 * run's terminal one) are queued for the durable event log too, as the event repository's are.
 */
export function createRunRepository(
  db: Kysely<RunDatabase>,
  cipher: ContentCipher = PLAIN_CONTENT,
  options: { outbox: boolean } = { outbox: false },
) {
  const sealed = (tenantId: string, input: unknown) => cipher.sealJson(tenantId, 'RunInputs', input);
  return {
    insert: (tenantId: string, run: NewRun, status: RunStatus = 'Running', record: RunStartRecord = {}) =>
      insertRun(db, tenantId, run, status, record.input === undefined ? record : { ...record, input: sealed(tenantId, record.input) }),

    async setStatus(runId: string, status: RunStatus) {
      await db
        .updateTable('runs')
        .set({ status: RUN_STATUSES.indexOf(status) })
        .where('id', '=', runId)
        .execute();
    },

    async heartbeatRun(runId: string) {
      await db
        .updateTable('runs')
        .set({ heartbeat_at: sql`now()` })
        .where('id', '=', runId)
        .execute();
    },

    /** A queued run leased by a worker; undefined when it ended already (a worker that died after finishing it). */
    /** A queued run starts; one queued without its agent's version (a schedule's firing) records the version it runs. */
    async markRunning(runId: string, agentVersion: number | null = null): Promise<RunRow | undefined> {
      const row = await db
        .updateTable('runs')
        .set({
          status: RUN_STATUSES.indexOf('Running'),
          started_at: sql`now()`,
          heartbeat_at: sql`now()`,
          agent_version: sql`coalesce(agent_version, ${agentVersion})`,
        })
        .where('id', '=', runId)
        .where('status', 'not in', ENDED)
        .returningAll()
        .executeTakeFirst();
      return row && toRun(row as Selected);
    },

    /** The first recording stands: a queued run executed again by the next worker keeps its input. */
    async recordInput(tenantId: string, runId: string, input: unknown) {
      await db
        .insertInto('run_inputs')
        .values({ run_id: runId, input: jsonb(sealed(tenantId, input)) })
        .onConflict((conflict) => conflict.column('run_id').doNothing())
        .execute();
    },

    async getInput(tenantId: string, runId: string) {
      const row = await db
        .selectFrom('run_inputs')
        .innerJoin('runs', 'runs.id', 'run_inputs.run_id')
        .select(['run_inputs.input', 'run_inputs.recorded_at'])
        .where('runs.tenant_id', '=', tenantId)
        .where('runs.id', '=', runId)
        .executeTakeFirst();
      return row && { input: cipher.openJson(tenantId, 'RunInputs', row.input), recorded_at: row.recorded_at };
    },

    async setModel(runId: string, provider: string, model: string) {
      await db.updateTable('runs').set({ model_provider: provider, model }).where('id', '=', runId).execute();
    },

    /** Records how a run ended; undefined when it had ended already (the first ending stands). */
    async finish(runId: string, outcome: RunOutcome): Promise<RunRow | undefined> {
      const row = await finishRow(db, runId, outcome).executeTakeFirst();
      return row && toRun(row as Selected);
    },

    /**
     * Records how a run ended and its terminal event after its last one, in one statement (so
     * together or not at all); undefined when it had ended already.
     */
    async finishWithEvent(tenantId: string, runId: string, outcome: RunOutcome, terminal: TerminalEvent): Promise<RunEnding | undefined> {
      const data = cipher.sealJson(tenantId, runEventColumn(terminal.type), terminal.data);
      const ending = db
        .with('ended', (qb) => finishRow(qb, runId, outcome).where('tenant_id', '=', tenantId))
        .with('stored', (qb) =>
          qb
            .insertInto('run_events')
            .columns(['run_id', 'seq', 'type', 'data'])
            .expression((eb) =>
              eb.selectFrom('ended').select([
                'ended.id',
                eb
                  .selectFrom('run_events')
                  .select(sql<number>`coalesce(max(seq), 0) + 1`.as('next'))
                  .where('run_id', '=', runId)
                  .as('seq'),
                sql<string>`${terminal.type}::text`.as('type'),
                jsonb(data).as('data'),
              ]),
            )
            .returningAll(),
        );
      // The outbox CTE is only written to: the statement reads what `ending` reads, with or without it.
      const queued: typeof ending = options.outbox
        ? (ending.with('queued', (qb) =>
            qb
              .insertInto('run_event_outbox')
              .columns(['root_run_id', 'payload'])
              .expression((eb) =>
                eb
                  .selectFrom('stored')
                  .innerJoin('ended', 'ended.id', 'stored.run_id')
                  .select([
                    'ended.root_run_id',
                    envelopeOfStored({
                      tenantId: sql`ended.tenant_id`,
                      rootRunId: sql`ended.root_run_id::text`,
                      agentName: sql`ended.agent_name`,
                      traceparent: terminal.traceparent,
                    }).as('payload'),
                  ]),
              ),
          ) as unknown as typeof ending)
        : ending;
      const statement = queued
        .selectFrom('ended')
        .innerJoin('stored', 'stored.run_id', 'ended.id')
        .selectAll('ended')
        .select(['stored.seq as event_seq', 'stored.at as event_at']);
      // A statement that waited for the run's row lock (an event stored under it meanwhile) read the
      // last seq before that event: its insert collides, and the statement is made again, fresh.
      const row = await statement.executeTakeFirst().catch((error: unknown) => {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
        return statement.executeTakeFirst();
      });
      if (!row) return undefined;
      const target: RunEventTarget = {
        runId,
        rootRunId: row.root_run_id,
        tenantId,
        agentName: row.agent_name,
        ...(terminal.traceparent && { traceparent: terminal.traceparent }),
      };
      const event = toEvent({ seq: row.event_seq, run_id: runId, type: terminal.type, at: row.event_at, data: terminal.data });
      return { run: toRun(row as unknown as Selected), target, event };
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
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;

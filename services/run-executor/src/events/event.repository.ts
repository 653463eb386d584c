import type { ShipOutbox } from '@hangar/messaging';
import { PLAIN_CONTENT, runEventColumn, type ContentCipher } from '@hangar/platform';
import { jsonb, shipOutbox, sql, type Kysely, type OutboxTables, type RawBuilder } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { RUN_STATUSES, TERMINAL_STATUSES } from '../runs/run.model.js';
import type { NewRunEvent, RunEventRow, RunEventTarget } from './event.model.js';

/**
 * Stores events of one run and, with `outbox`, queues them for the event log in the same
 * statement, so nothing is shipped that was not stored. The outbox entry is the envelope
 * consumers read: tenant, run, root, agent, seq, type, time and data.
 */
export async function insertEvents(
  db: Kysely<RunDatabase>,
  target: RunEventTarget,
  events: NewRunEvent[],
  outbox: boolean,
  cipher: ContentCipher = PLAIN_CONTENT,
): Promise<RunEventRow[]> {
  const values = events.map(({ seq, type, data }) => ({
    run_id: target.runId,
    seq,
    type,
    data: jsonb(cipher.sealJson(target.tenantId, runEventColumn(type), data)),
  }));
  // The sealed data stays in the table and the outbox; the writer gets back what it wrote.
  const written = new Map(events.map((event) => [event.seq, event.data]));
  const asWritten = (row: Parameters<typeof toEvent>[0]) => toEvent({ ...row, data: written.get(row.seq) });
  if (!outbox) return (await db.insertInto('run_events').values(values).returningAll().execute()).map(asWritten);
  const rows = await db
    .with('stored', (qb) => qb.insertInto('run_events').values(values).returningAll())
    .with('queued', (qb) =>
      qb
        .insertInto('run_event_outbox')
        .columns(['root_run_id', 'payload'])
        .expression((eb) =>
          eb
            .selectFrom('stored')
            .select([
              sql<string>`${target.rootRunId}::uuid`.as('root_run_id'),
              envelopeOfStored({
                tenantId: sql`${target.tenantId}::text`,
                rootRunId: sql`${target.rootRunId}::text`,
                agentName: sql`${target.agentName}::text`,
                traceparent: target.traceparent,
              }).as('payload'),
            ])
            // Outbox ids follow the sequence, so the relay ships a run's events in order.
            .orderBy('stored.seq'),
        ),
    )
    .selectFrom('stored')
    .selectAll()
    .orderBy('seq')
    .execute();
  return rows.map(asWritten);
}

/**
 * The envelope consumers read, built in SQL from the event a statement stores (its CTE `stored`)
 * and its run's identity (parameters, or columns of a row the statement ended).
 */
export const envelopeOfStored = (run: {
  tenantId: RawBuilder<unknown>;
  rootRunId: RawBuilder<unknown>;
  agentName: RawBuilder<unknown>;
  traceparent?: string;
}) =>
  sql<unknown>`jsonb_build_object('tenantId', ${run.tenantId}, 'runId', stored.run_id, 'rootRunId', ${run.rootRunId}, 'agentName', ${run.agentName}, 'seq', stored.seq, 'type', stored.type, 'at', stored.at, 'data', stored.data, 'traceparent', ${run.traceparent ?? null}::text)`;

export const toEvent = (row: { seq: number; run_id: string; type: string; at: Date; data: unknown }): RunEventRow => ({
  seq: row.seq,
  runId: row.run_id,
  type: row.type,
  at: row.at.toISOString(),
  data: row.data as Record<string, unknown>,
});

/** The sequence of a run's last event, 0 when it has none. */
export async function lastSeq(db: Kysely<RunDatabase>, runId: string): Promise<number> {
  const last = await db
    .selectFrom('run_events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return Number(last?.seq ?? 0);
}

/** The outbox is shipped by one relay at a time (the lease row), so a root's events leave in order. */
export const RUN_EVENT_OUTBOX: OutboxTables = { outbox: 'run_event_outbox', lease: 'run_event_outbox_lease', keyColumn: 'root_run_id' };

/**
 * A run's event log (`run_events`) and the outbox that carries it to a durable event log (Kafka).
 * Without `outbox` (an in-process event log, gone with its process anyway) events are stored
 * alone and handed to the log by the writer.
 */
export function createEventRepository(db: Kysely<RunDatabase>, options: { outbox: boolean; cipher?: ContentCipher }) {
  const cipher = options.cipher ?? PLAIN_CONTENT;
  return {
    appendEvents: (target: RunEventTarget, events: NewRunEvent[]) => insertEvents(db, target, events, options.outbox, cipher),

    lastSeq: (runId: string) => lastSeq(db, runId),

    /** A run's events after `afterSeq`, opened for the run's tenant. */
    async events(tenantId: string, runId: string, afterSeq: number): Promise<RunEventRow[]> {
      const rows = await db
        .selectFrom('run_events')
        .selectAll()
        .where('run_id', '=', runId)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .execute();
      return rows.map((row) => toEvent({ ...row, data: cipher.openJson(tenantId, runEventColumn(row.type), row.data) }));
    },

    /**
     * Where each followed run stands, in one statement for all of them: the seq of its last stored
     * event and whether its row says it ended. A run that is not stored (purged) is absent.
     */
    async followedRuns(runIds: string[]): Promise<Map<string, { lastSeq: number; ended: boolean }>> {
      if (!runIds.length) return new Map();
      const rows = await db
        .selectFrom('runs as r')
        .select((eb) => [
          'r.id',
          'r.status',
          eb
            .selectFrom('run_events as e')
            .select((inner) => inner.fn.max('e.seq').as('seq'))
            .whereRef('e.run_id', '=', 'r.id')
            .as('last_seq'),
        ])
        .where(sql<boolean>`r.id = any(${runIds}::uuid[])`)
        .execute();
      return new Map(
        rows.map((row) => [row.id, { lastSeq: Number(row.last_seq ?? 0), ended: TERMINAL_STATUSES.has(RUN_STATUSES[row.status]) }]),
      );
    },

    /** Ships queued events to the event log (see `shipOutbox` in @hangar/storage). */
    shipOutbox: ((lease, ship) => shipOutbox(db, RUN_EVENT_OUTBOX, lease, ship)) satisfies ShipOutbox,
  };
}

export type EventRepository = ReturnType<typeof createEventRepository>;

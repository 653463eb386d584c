import { sql, type Kysely } from 'kysely';
import { createLeaseTable, holdsLease, releaseLease, takeLease } from './lease.js';

/**
 * A transactional outbox: rows written in the same statement or transaction as the change they
 * announce, shipped to an event log by one relay at a time (the lease row), then deleted. Tables:
 * `{outbox}(id bigserial primary key, {keyColumn} <any>, payload jsonb)` and
 * `{lease}(id smallint primary key = 1, owner text, expires_at timestamptz)` holding one row.
 */
export interface OutboxTables {
  outbox: string;
  lease: string;
  /** The column whose value becomes the record key (records with one key keep their order). */
  keyColumn: string;
}

/** Creates the outbox and its lease row (for a service's migrations). */
export async function createOutboxTables(db: Kysely<any>, tables: OutboxTables, keyType: 'text' | 'uuid' = 'text') {
  await db.schema
    .createTable(tables.outbox)
    .addColumn('id', 'bigserial', (column) => column.primaryKey())
    .addColumn(tables.keyColumn, keyType, (column) => column.notNull())
    .addColumn('payload', 'jsonb', (column) => column.notNull())
    .execute();
  await createLeaseTable(db, tables.lease);
}

/**
 * Hands up to `limit` queued rows, oldest first, to `ship`, and deletes them once it returns; the
 * number shipped. No transaction is open while `ship` waits on the event log: the relay first takes
 * the lease (relays in several processes ship in turn, so order holds), and a relay that dies
 * mid-shipment leaves its rows for the next lease holder (at-least-once).
 */
export async function shipOutbox(
  db: Kysely<any>,
  tables: OutboxTables,
  lease: { owner: string; leaseMs: number; limit: number },
  ship: (records: Array<{ key: string; value: string; traceparent?: string }>) => Promise<void>,
): Promise<number> {
  const { owner } = lease;
  if (!(await takeLease(db, tables.lease, owner, lease.leaseMs))) return 0;
  try {
    const rows = await db
      .selectFrom(tables.outbox)
      .select(['id', sql.ref(tables.keyColumn).as('key'), 'payload'])
      .orderBy('id')
      .limit(lease.limit)
      .execute();
    if (!rows.length) return 0;
    await ship(rows.map((row) => ({ key: String(row.key), value: JSON.stringify(row.payload), ...traceparentOf(row.payload) })));
    // Only while the lease is still ours: a relay whose shipment outlived it leaves the rows to the next holder.
    await db
      .deleteFrom(tables.outbox)
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .where(holdsLease(tables.lease, owner))
      .execute();
    return rows.length;
  } finally {
    await releaseLease(db, tables.lease, owner);
  }
}

/** A payload's `traceparent` travels beside it too (as a Kafka header), so consumers that read only headers join the trace. */
const traceparentOf = (payload: { traceparent?: unknown }) =>
  typeof payload?.traceparent === 'string' ? { traceparent: payload.traceparent } : {};

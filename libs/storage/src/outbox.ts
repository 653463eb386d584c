import { sql, type Kysely } from 'kysely';
import { createLeaseTable, leaseReleasing, leaseTaking, releaseLease } from './lease.js';

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
 * mid-shipment leaves its rows for the next lease holder (at-least-once). Two statements a round:
 * the lease taken with the rows read (only when there are rows), the rows deleted with the lease
 * released.
 */
export async function shipOutbox(
  db: Kysely<any>,
  tables: OutboxTables,
  lease: { owner: string; leaseMs: number; limit: number },
  ship: (records: Array<{ key: string; value: string; traceparent?: string }>) => Promise<void>,
): Promise<number> {
  const { owner } = lease;
  const rows = await db
    .with('taken', () =>
      leaseTaking(db, tables.lease, owner, lease.leaseMs)
        .where((eb: any) => eb.exists(eb.selectFrom(tables.outbox).select('id')))
        .returning('owner'),
    )
    .selectFrom(tables.outbox)
    .select(['id', sql.ref(tables.keyColumn).as('key'), 'payload'])
    .where((eb: any) => eb.exists(eb.selectFrom('taken').select('owner')))
    .orderBy('id')
    .limit(lease.limit)
    .execute();
  if (!rows.length) return 0;
  try {
    await ship(rows.map((row) => ({ key: String(row.key), value: JSON.stringify(row.payload), ...traceparentOf(row.payload) })));
  } catch (error) {
    await releaseLease(db, tables.lease, owner);
    throw error;
  }
  // Only while the lease is still ours: a relay whose shipment outlived it leaves the rows to the next holder.
  await db
    .with('released', () => leaseReleasing(db, tables.lease, owner).returning('owner'))
    .deleteFrom(tables.outbox)
    .where(
      'id',
      'in',
      rows.map((row) => row.id),
    )
    .where((eb: any) => eb.exists(eb.selectFrom('released').select('owner')))
    .execute();
  return rows.length;
}

/** A payload's `traceparent` travels beside it too (as a Kafka header), so consumers that read only headers join the trace. */
const traceparentOf = (payload: { traceparent?: unknown }) =>
  typeof payload?.traceparent === 'string' ? { traceparent: payload.traceparent } : {};

import { sql, type Kysely } from 'kysely';

/**
 * A singleton lease: a table holding one row `(id = 1, owner, expires_at)` that names which instance
 * does some work now. A holder that dies frees it when it runs out.
 */
const LEASE_ID = 1;

/** The update that takes (or extends) the lease for `owner`; it changes no row while another owner holds it. */
export const leaseTaking = (db: Kysely<any>, table: string, owner: string, leaseMs: number) =>
  db
    .updateTable(table)
    .set({ owner, expires_at: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where('id', '=', LEASE_ID)
    .where((where) => where.or([where('owner', 'is', null), where('owner', '=', owner), where('expires_at', '<', sql<Date>`now()`)]));

/** Takes (or extends) the lease for `owner`; false while another owner holds it. */
export async function takeLease(db: Kysely<any>, table: string, owner: string, leaseMs: number): Promise<boolean> {
  const taken = await leaseTaking(db, table, owner, leaseMs).returning('owner').executeTakeFirst();
  return taken !== undefined;
}

/** The update that frees the lease if `owner` holds it. */
export const leaseReleasing = (db: Kysely<any>, table: string, owner: string) =>
  db.updateTable(table).set({ owner: null, expires_at: null }).where('id', '=', LEASE_ID).where('owner', '=', owner);

export async function releaseLease(db: Kysely<any>, table: string, owner: string): Promise<void> {
  await leaseReleasing(db, table, owner).execute();
}

/** Creates the lease table with its one row (for a service's migrations). */
export async function createLeaseTable(db: Kysely<any>, table: string): Promise<void> {
  await db.schema
    .createTable(table)
    .addColumn('id', 'smallint', (column) => column.primaryKey().check(sql`id = 1`))
    .addColumn('owner', 'text')
    .addColumn('expires_at', 'timestamptz')
    .execute();
  await db.insertInto(table).values({ id: LEASE_ID, owner: null, expires_at: null }).execute();
}

import { sql, type Kysely, type RawBuilder } from 'kysely';

/** One retention target in a service's schema: which rows of which table are old enough to go. */
export interface PurgeTarget {
  table: string;
  /** The columns that identify a row (its primary key). */
  key: string[];
  /** The rows to delete, given the cutoff (e.g. `at < cutoff`); columns unqualified. */
  older: (cutoff: Date) => RawBuilder<boolean>;
}

export interface PurgeOptions {
  cutoff: Date;
  /** Copy the rows to `<table>_archive` (same columns, created on first use) before deleting them. */
  archive: boolean;
  batchSize: number;
  /** Pause between batches, so a large purge leaves room for everything else. */
  batchDelayMs: number;
}

/**
 * Deletes a target's old rows in batches of `batchSize`, each batch one statement (archived and
 * deleted together), until a batch comes back short. Rows that reference deleted ones go with them
 * (their foreign keys cascade) and are not archived.
 */
export async function purgeInBatches(
  db: Kysely<any>,
  schema: string,
  target: PurgeTarget,
  options: PurgeOptions,
): Promise<{ deleted: number; archived: number }> {
  const table = sql.id(schema, target.table);
  const archive = sql.id(schema, `${target.table}_archive`);
  const key = sql.join(target.key.map((column) => sql.id(column)));
  if (options.archive) await sql`create table if not exists ${archive} (like ${table})`.execute(db);
  let deleted = 0;
  for (let batch = 0; ; batch++) {
    if (batch > 0 && options.batchDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.batchDelayMs));
    const doomed = sql`select ${key} from ${table} where ${target.older(options.cutoff)} limit ${options.batchSize}`;
    const statement = options.archive
      ? sql<{ count: string }>`with gone as (delete from ${table} where (${key}) in (${doomed}) returning *),
          kept as (insert into ${archive} select * from gone returning 1)
          select count(*) as count from kept`
      : sql<{
          count: string;
        }>`with gone as (delete from ${table} where (${key}) in (${doomed}) returning 1) select count(*) as count from gone`;
    const count = Number((await statement.execute(db)).rows[0]?.count ?? 0);
    deleted += count;
    if (count < options.batchSize) break;
  }
  return { deleted, archived: options.archive ? deleted : 0 };
}

import { sql, type Kysely, type RawBuilder } from 'kysely';

/** One retention target in a service's schema: which rows of which table are old enough to go. */
export interface PurgeTarget {
  table: string;
  /** The columns that identify a row (its primary key). */
  key: string[];
  /** The rows to delete, given the cutoff (e.g. `at < cutoff`); columns unqualified. */
  older: (cutoff: Date) => RawBuilder<boolean>;
  /**
   * Called with the keys of each batch before it is deleted, to delete what other services hold for
   * those rows (a session's attachments); when it throws, the batch stays and the purge stops there.
   */
  beforeDelete?: (keys: Array<Record<string, unknown>>) => Promise<void>;
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
  const columns = options.archive ? await archiveLike(db, schema, target.table) : [];
  const list = sql.join(columns.map((column) => sql.id(column)));
  let deleted = 0;
  for (let batch = 0; ; batch++) {
    if (batch > 0 && options.batchDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.batchDelayMs));
    let doomed = sql`select ${key} from ${table} where ${target.older(options.cutoff)} limit ${options.batchSize}`;
    if (target.beforeDelete) {
      const keys = (await doomed.execute(db)).rows as Array<Record<string, unknown>>;
      if (!keys.length) break;
      await target.beforeDelete(keys);
      doomed = sql`values ${sql.join(keys.map((row) => sql`(${sql.join(target.key.map((column) => row[column]))})`))}`;
    }
    const statement = options.archive
      ? sql<{ count: string }>`with gone as (delete from ${table} where (${key}) in (${doomed}) returning *),
          kept as (insert into ${archive} (${list}) select ${list} from gone returning 1)
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

/**
 * Makes `<table>_archive` hold every column the table has now (created like it on first use, given
 * the columns a migration added since), and names them: rows are archived column by column.
 */
async function archiveLike(db: Kysely<any>, schema: string, table: string): Promise<string[]> {
  const archive = `${table}_archive`;
  await sql`create table if not exists ${sql.id(schema, archive)} (like ${sql.id(schema, table)})`.execute(db);
  const columnsOf = async (name: string) =>
    (
      await sql<{ name: string; type: string }>`select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
        where attrelid = (quote_ident(${schema}) || '.' || quote_ident(${name}))::regclass and attnum > 0 and not attisdropped
        order by attnum`.execute(db)
    ).rows;
  const [source, archived] = await Promise.all([columnsOf(table), columnsOf(archive)]);
  const present = new Set(archived.map((column) => column.name));
  for (const column of source.filter((each) => !present.has(each.name))) {
    await sql`alter table ${sql.id(schema, archive)} add column if not exists ${sql.id(column.name)} ${sql.raw(column.type)}`.execute(db);
  }
  return source.map((column) => column.name);
}

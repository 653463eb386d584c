import { sql, type Kysely, type RawBuilder } from '@hangar/storage';
import type { ContentCipher, ProtectedColumn } from './content-cipher.js';

/** One protected column of a service's table, as the re-encryption job walks it. */
export interface SealedColumn {
  table: string;
  /** The columns that identify a row. */
  key: string[];
  column: string;
  protects: ProtectedColumn;
  /** jsonb (a sealed value is `{ "$hgc1": … }`) or text. */
  json: boolean;
  /** Each row's tenant (the table is aliased `t`): a column of it, or a lookup in another table of the schema. */
  tenant: (schema: string) => RawBuilder<string>;
  /** Only these rows hold this protected column (run events split between RunEventData and ToolPayloads). */
  where?: RawBuilder<boolean>;
}

/**
 * Seals again, under the active key, every value of the column that is plain or sealed with another
 * key, `batchSize` rows at a time; the number of values moved. A value whose key is not configured
 * stops the job with that key's error (nothing is written for it).
 */
export async function resealInBatches(
  db: Kysely<any>,
  schema: string,
  target: SealedColumn,
  cipher: ContentCipher,
  batchSize: number,
): Promise<number> {
  const { activeKeyId } = cipher;
  if (!activeKeyId || !cipher.protects(target.protects)) return 0;
  const table = sql.id(schema, target.table);
  const column = sql.id(target.column);
  const current = `hgc1.${activeKeyId}.%`;
  const stale = target.json
    ? sql<boolean>`not (jsonb_typeof(${column}) = 'object' and coalesce(${column} ->> '$hgc1', '') like ${current})`
    : sql<boolean>`${column} not like ${current}`;
  const keys = sql.join(target.key.map((name) => sql.id(name)));
  let moved = 0;
  while (true) {
    const rows = (
      await sql<Record<string, unknown>>`select ${keys}, ${target.tenant(schema)} as hgc_tenant, ${column} as hgc_value from ${table} as t
        where ${column} is not null and ${stale} ${target.where ? sql`and ${target.where}` : sql``} limit ${batchSize}`.execute(db)
    ).rows;
    if (!rows.length) return moved;
    for (const row of rows) {
      const tenantId = String(row.hgc_tenant ?? '');
      const value = target.json
        ? cipher.sealJson(tenantId, target.protects, cipher.openJson(tenantId, target.protects, row.hgc_value))
        : cipher.seal(tenantId, target.protects, cipher.open(tenantId, target.protects, String(row.hgc_value)));
      const match = sql.join(
        target.key.map((name) => sql`${sql.id(name)} = ${row[name]}`),
        sql` and `,
      );
      await sql`update ${table} set ${column} = ${target.json ? sql`${JSON.stringify(value)}::jsonb` : sql`${value}`} where ${match}`.execute(
        db,
      );
      moved++;
    }
  }
}

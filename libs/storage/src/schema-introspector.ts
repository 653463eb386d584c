import {
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Dialect,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/**
 * What Kysely's migrator asks (does my schema exist, does my migration table) answered from this
 * process's schemas only. Kysely's own Postgres introspector reads every table in the database and
 * calls functions such as pg_get_serial_sequence on each: slow on a shared database, and it fails
 * with `schema "…" does not exist` when another tenant of that database drops a schema meanwhile.
 */
class ServiceSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schemaPrefix: string,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      select nspname as name from pg_catalog.pg_namespace where starts_with(nspname, ${this.prefix()})`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string; kind: string }>`
      select ns.nspname as schema, c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where starts_with(ns.nspname, ${this.prefix()}) and c.relkind in ('r', 'v', 'p')`.execute(this.db);
    // The migrator reads names only; columns are not needed and not read.
    return rows.map((row) => ({ schema: row.schema, name: row.name, isView: row.kind === 'v', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }

  private prefix() {
    return `${this.schemaPrefix}_`;
  }
}

/** `inner` with introspection narrowed to the schemas named `{schemaPrefix}_…`. */
export function withServiceSchemaIntrospection(inner: Dialect, schemaPrefix: string): Dialect {
  return {
    createDriver: () => inner.createDriver(),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => new ServiceSchemaIntrospector(db, schemaPrefix),
  };
}

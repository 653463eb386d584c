import type { Logger } from '@hangar/platform';
import { sql, type Kysely } from '@hangar/storage';

/** Whether documents can be stored and searched; when not, `reason` says why (answered as 501). */
export type VectorSupport = { available: true } | { available: false; reason: string };

/** How long an unavailable vector table is believed before it is tried again. */
const RETRY_UNAVAILABLE_MS = 30_000;

/**
 * The vector table's state as requests need it: made once, and while unavailable (no extension
 * yet, a database that was away at start) tried again at most every RETRY_UNAVAILABLE_MS, so an
 * operator's fix or an engine's return takes effect without a restart.
 */
export function watchVectorTable(ensure: () => Promise<VectorSupport>, logger: Pick<Logger, 'warn' | 'info'>) {
  let support: Promise<VectorSupport> | undefined;
  let checkedAt = 0;
  return async (): Promise<VectorSupport> => {
    const known = support && (await support);
    if (known && (known.available || Date.now() - checkedAt < RETRY_UNAVAILABLE_MS)) return known;
    checkedAt = Date.now();
    support = ensure().then((next) => {
      if (!next.available) logger.warn({ reason: next.reason }, `knowledge documents and search answer 501: ${next.reason}`);
      else if (known) logger.info('knowledge documents and search are available again');
      return next;
    });
    return support;
  };
}

/** pgvector's HNSW index takes `vector` columns of at most this many dimensions. */
export const HNSW_MAX_DIMENSIONS = 2000;

/**
 * Makes the chunk table: its embedding column's type is `vector(dimensions)` (Knowledge:Dimensions),
 * so it cannot be a fixed migration. Creates the vector extension first when the server has it
 * (PostgreSQL with pgvector installed; PGlite always), under one advisory lock per database so
 * processes starting together do not collide. A server without the extension (or with one older
 * than 0.8), a table already holding embeddings of another size, or any failure of this DDL leaves
 * knowledge unavailable with the reason, never the process down; an empty table of another size is
 * changed to the new one (the schema migration SPEC says a new size needs).
 */
export async function ensureVectorTable(db: Kysely<any>, schema: string, dimensions: number): Promise<VectorSupport> {
  try {
    return await makeVectorTable(db, schema, dimensions);
  } catch (error) {
    // A role without the right to create, a changed table: knowledge is unavailable, Hangar is not.
    return { available: false, reason: `the chunk table could not be made: ${(error as Error).message}` };
  }
}

/** pgvector 0.8 brought the iterative index scans that keep a filtered search from coming back short. */
const MINIMUM_VERSION = [0, 8];

async function makeVectorTable(db: Kysely<any>, schema: string, dimensions: number): Promise<VectorSupport> {
  const found = await sql<{ installed: string | null; available: string | null }>`
    select (select extversion from pg_extension where extname = 'vector') as installed,
           (select default_version from pg_available_extensions where name = 'vector') as available`.execute(db);
  const { installed, available } = found.rows[0];
  if (!installed && !available) {
    return {
      available: false,
      reason: 'the PostgreSQL server has no vector extension (install pgvector: deploy/local/pgvector.sh on this machine)',
    };
  }
  const version = (installed ?? available)!;
  const [major, minor] = version.split('.').map(Number);
  if (major < MINIMUM_VERSION[0] || (major === MINIMUM_VERSION[0] && minor < MINIMUM_VERSION[1])) {
    const remedy = installed ? 'ALTER EXTENSION vector UPDATE after installing a newer pgvector' : 'install a newer pgvector';
    return { available: false, reason: `pgvector ${version} is older than ${MINIMUM_VERSION.join('.')} (${remedy})` };
  }
  const chunks = sql.id(schema, 'chunks');
  return db.transaction().execute(async (trx) => {
    // One lock for every schema prefix: the extension is the database's, not the schema's.
    await sql`select pg_advisory_xact_lock(hashtext('hangar.knowledge.vector'))`.execute(trx);
    // In public, which every search_path of the services holds (the type and its operators are looked up there).
    if (!installed) await sql`create extension if not exists vector schema public`.execute(trx);
    const column = await sql<{ dimensions: number }>`
        select a.atttypmod as dimensions from pg_attribute a
        where a.attrelid = to_regclass(${`${schema}.chunks`}) and a.attname = 'embedding'`.execute(trx);
    const existing = column.rows[0]?.dimensions;
    if (existing === undefined) {
      await sql`
          create table ${chunks} (
            tenant_id text not null,
            document_id text not null,
            collection text not null,
            position integer not null,
            text text not null,
            embedding vector(${sql.raw(String(dimensions))}) not null,
            constraint chunks_pk primary key (tenant_id, document_id, position),
            constraint chunks_document_fk foreign key (tenant_id, document_id)
              references ${sql.id(schema, 'documents')} (tenant_id, id) on delete cascade
          )`.execute(trx);
      // The planner needs row counts, not the vectors' value statistics (costly to gather, unused).
      await sql`alter table ${chunks} alter column embedding set statistics 0`.execute(trx);
      await sql`create index chunks_collection on ${chunks} (tenant_id, collection)`.execute(trx);
      await createEmbeddingIndex(trx, chunks, dimensions);
      return { available: true as const };
    }
    if (existing === dimensions) return { available: true as const };
    // Held until the change commits: no upload lands between the check and the change.
    await sql`lock table ${chunks} in share row exclusive mode`.execute(trx);
    const stored = await sql<{ any: boolean }>`select exists (select 1 from ${chunks}) as any`.execute(trx);
    if (stored.rows[0].any) {
      return {
        available: false as const,
        reason:
          `the stored embeddings have ${existing} dimensions and Knowledge:Dimensions is ${dimensions}: ` +
          `set it back to ${existing}, or delete every document and start again to embed anew`,
      };
    }
    await sql`drop index if exists ${sql.id(schema, 'chunks_embedding')}`.execute(trx);
    await sql`alter table ${chunks} alter column embedding type vector(${sql.raw(String(dimensions))})`.execute(trx);
    await createEmbeddingIndex(trx, chunks, dimensions);
    return { available: true as const };
  });
}

/** HNSW over cosine distance; above HNSW_MAX_DIMENSIONS searches scan the tenant's chunks exactly. */
async function createEmbeddingIndex(db: Kysely<any>, chunks: ReturnType<typeof sql.id>, dimensions: number) {
  if (dimensions > HNSW_MAX_DIMENSIONS) return;
  await sql`create index chunks_embedding on ${chunks} using hnsw (embedding vector_cosine_ops)`.execute(db);
}

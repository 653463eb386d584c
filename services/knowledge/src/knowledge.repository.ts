import { sql, type Generated, type Kysely, type Selectable } from '@hangar/storage';
import type { DocumentMediaType } from './documents/text-extraction.js';

export interface KnowledgeDatabase {
  collections: {
    tenant_id: string;
    name: string;
    description: string;
    embedding_provider: string;
    embedding_model: string;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  documents: {
    tenant_id: string;
    id: string;
    collection: string;
    name: string;
    media_type: string;
    characters: number;
    chunk_count: number;
    created_at: Generated<Date>;
  };
  chunks: {
    tenant_id: string;
    document_id: string;
    collection: string;
    position: number;
    text: string;
    /** pgvector's text form, `[0.1,0.2,…]`. */
    embedding: string;
  };
}

export interface CollectionRecord {
  name: string;
  description: string;
  embeddingProvider: string;
  embeddingModel: string;
  documents: number;
  chunks: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface DocumentRecord {
  id: string;
  name: string;
  mediaType: DocumentMediaType;
  chunks: number;
  characters: number;
  createdAt: Date;
}

export interface EmbeddedChunk {
  text: string;
  embedding: number[];
}

export interface SearchHit {
  documentId: string;
  documentName: string;
  chunk: number;
  score: number;
  text: string;
}

/** Rows per INSERT of chunks: well under PostgreSQL's 65,535 parameters at 5 per row. */
const CHUNK_BATCH = 500;

const vectorText = (embedding: number[]) => `[${embedding.join(',')}]`;

const toDocument = (row: Selectable<KnowledgeDatabase['documents']>): DocumentRecord => ({
  id: row.id,
  name: row.name,
  mediaType: row.media_type as DocumentMediaType,
  chunks: row.chunk_count,
  characters: row.characters,
  createdAt: row.created_at,
});

/**
 * All SQL of knowledge: collections, documents and their embedded chunks, per tenant.
 *
 * The planner picks the HNSW index over an exact scan of the collection only with statistics of
 * the chunk table. PGlite has no autovacuum to gather them, so chunk writes count here and the
 * table is analyzed once they pass autovacuum's own threshold (50 rows + 10% of the table).
 */
export function createKnowledgeRepository(db: Kysely<KnowledgeDatabase>, schema: string) {
  const chunkTable = sql.id(schema, 'chunks');
  let writtenSinceAnalyze = 0;
  let analyzedRows: number | undefined;
  let analyzing: Promise<void> | undefined;

  /** Not awaited by the upload: statistics help later searches, and a failed ANALYZE is tried again after more writes. */
  function analyzeWhenGrown(written: number) {
    writtenSinceAnalyze += written;
    if (analyzing) return;
    analyzing = (async () => {
      analyzedRows ??= Number(
        (
          await sql<{
            rows: number;
          }>`select greatest(reltuples, 0)::float8 as rows from pg_class where oid = to_regclass(${`${schema}.chunks`})`.execute(db)
        ).rows[0]?.rows ?? 0,
      );
      if (writtenSinceAnalyze < 50 + 0.1 * analyzedRows) return;
      const rows = analyzedRows + writtenSinceAnalyze;
      writtenSinceAnalyze = 0;
      await sql`analyze ${chunkTable}`.execute(db);
      analyzedRows = rows;
    })()
      .catch(() => {})
      .finally(() => (analyzing = undefined));
  }

  const collectionsWithCounts = (tenantId: string) =>
    db
      .selectFrom('collections as c')
      .leftJoin('documents as d', (join) => join.onRef('d.tenant_id', '=', 'c.tenant_id').onRef('d.collection', '=', 'c.name'))
      .where('c.tenant_id', '=', tenantId)
      .groupBy(['c.tenant_id', 'c.name'])
      .select([
        'c.name',
        'c.description',
        'c.embedding_provider',
        'c.embedding_model',
        'c.created_at',
        'c.updated_at',
        sql<number>`count(d.id)::int`.as('documents'),
        sql<number>`coalesce(sum(d.chunk_count), 0)::int`.as('chunks'),
      ]);

  const toCollection = (
    row: Awaited<ReturnType<ReturnType<typeof collectionsWithCounts>['executeTakeFirstOrThrow']>>,
  ): CollectionRecord => ({
    name: row.name,
    description: row.description,
    embeddingProvider: row.embedding_provider,
    embeddingModel: row.embedding_model,
    documents: row.documents,
    chunks: row.chunks,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  return {
    /** Undefined when the collection exists with another embedding model (its vectors are that model's). */
    async putCollection(
      tenantId: string,
      name: string,
      fields: { description: string; embeddingProvider: string; embeddingModel: string },
    ): Promise<{ created: boolean } | undefined> {
      const row = await db
        .insertInto('collections')
        .values({
          tenant_id: tenantId,
          name,
          description: fields.description,
          embedding_provider: fields.embeddingProvider,
          embedding_model: fields.embeddingModel,
        })
        .onConflict((conflict) =>
          conflict
            .columns(['tenant_id', 'name'])
            .doUpdateSet({ description: fields.description, updated_at: sql`now()` })
            .where('collections.embedding_provider', '=', fields.embeddingProvider)
            .where('collections.embedding_model', '=', fields.embeddingModel),
        )
        .returning(sql<boolean>`xmax = 0`.as('created'))
        .executeTakeFirst();
      return row && { created: row.created };
    },

    async getCollection(tenantId: string, name: string): Promise<CollectionRecord | undefined> {
      const row = await collectionsWithCounts(tenantId).where('c.name', '=', name).executeTakeFirst();
      return row && toCollection(row);
    },

    async listCollections(tenantId: string): Promise<CollectionRecord[]> {
      return (await collectionsWithCounts(tenantId).orderBy('c.name').execute()).map(toCollection);
    },

    /** With its documents and their chunks (foreign keys cascade). */
    async deleteCollection(tenantId: string, name: string): Promise<boolean> {
      const result = await db.deleteFrom('collections').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /**
     * The document and its chunks in one transaction; undefined when the collection read before
     * embedding is gone: deleted meanwhile, or deleted and made again (perhaps with another model,
     * whose vectors these are not).
     */
    async addDocument(
      tenantId: string,
      read: Pick<CollectionRecord, 'name' | 'embeddingProvider' | 'embeddingModel' | 'createdAt'>,
      document: { id: string; name: string; mediaType: DocumentMediaType; characters: number },
      chunks: EmbeddedChunk[],
    ): Promise<DocumentRecord | undefined> {
      const stored = await db.transaction().execute(async (trx) => {
        const collection = read.name;
        // FOR KEY SHARE: a delete waits for this upload; a description change does not.
        const exists = await trx
          .selectFrom('collections')
          .select('name')
          .where('tenant_id', '=', tenantId)
          .where('name', '=', collection)
          .where('embedding_provider', '=', read.embeddingProvider)
          .where('embedding_model', '=', read.embeddingModel)
          // As read into a Date: PostgreSQL keeps microseconds, a Date milliseconds.
          .where(sql<Date>`date_trunc('milliseconds', created_at)`, '=', read.createdAt)
          .forKeyShare()
          .executeTakeFirst();
        if (!exists) return undefined;
        const row = await trx
          .insertInto('documents')
          .values({
            tenant_id: tenantId,
            id: document.id,
            collection,
            name: document.name,
            media_type: document.mediaType,
            characters: document.characters,
            chunk_count: chunks.length,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        for (let start = 0; start < chunks.length; start += CHUNK_BATCH) {
          await trx
            .insertInto('chunks')
            .values(
              chunks.slice(start, start + CHUNK_BATCH).map((chunk, offset) => ({
                tenant_id: tenantId,
                document_id: document.id,
                collection,
                position: start + offset,
                text: chunk.text,
                embedding: vectorText(chunk.embedding),
              })),
            )
            .execute();
        }
        return toDocument(row);
      });
      if (stored) analyzeWhenGrown(chunks.length);
      return stored;
    },

    async listDocuments(tenantId: string, collection: string, skip: number, take: number): Promise<DocumentRecord[]> {
      const rows = await db
        .selectFrom('documents')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('collection', '=', collection)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .offset(skip)
        .limit(take)
        .execute();
      return rows.map(toDocument);
    },

    async deleteDocument(tenantId: string, collection: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('documents')
        .where('tenant_id', '=', tenantId)
        .where('collection', '=', collection)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /**
     * The `limit` chunks of the collection nearest the query by cosine distance, nearest first. HNSW
     * alone would look at its first `ef_search` candidates of every tenant and then filter; pgvector's
     * iterative scan goes on through the index for more, up to `hnsw.max_scan_tuples` (20,000) rows,
     * so a small collection in a large table may come back short when the planner takes the index
     * (it takes the exact scan of the collection when that looks cheaper).
     */
    async search(tenantId: string, collection: string, embedding: number[], limit: number): Promise<SearchHit[]> {
      const query = vectorText(embedding);
      return db.transaction().execute(async (trx) => {
        await sql`select set_config('hnsw.iterative_scan', 'strict_order', true),
                         set_config('hnsw.ef_search', ${String(Math.max(40, limit))}, true)`.execute(trx);
        const rows = await trx
          .with('nearest', (nearest) =>
            nearest
              .selectFrom('chunks')
              .select(['document_id', 'position', 'text', sql<number>`embedding <=> ${query}::vector`.as('distance')])
              .where('tenant_id', '=', tenantId)
              .where('collection', '=', collection)
              .orderBy(sql`embedding <=> ${query}::vector`)
              .limit(limit),
          )
          .selectFrom('nearest')
          .innerJoin('documents as d', (join) => join.on('d.tenant_id', '=', tenantId).onRef('d.id', '=', 'nearest.document_id'))
          .select(['nearest.document_id', 'd.name', 'nearest.position', 'nearest.text', 'nearest.distance'])
          .orderBy('nearest.distance')
          .orderBy('nearest.document_id')
          .orderBy('nearest.position')
          .execute();
        return rows.map((row) => ({
          documentId: row.document_id,
          documentName: row.name,
          chunk: row.position,
          score: 1 - Number(row.distance),
          text: row.text,
        }));
      });
    },
  };
}

export type KnowledgeRepository = ReturnType<typeof createKnowledgeRepository>;

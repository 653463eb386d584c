import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkText } from '../src/documents/chunking.js';
import { demoEmbedding } from '../src/embeddings/demo-embeddings.js';
import { createKnowledgeRepository, type KnowledgeDatabase, type KnowledgeRepository } from '../src/knowledge.repository.js';
import { KNOWLEDGE_SCHEMA, knowledgeMigrations } from '../src/migrations/index.js';
import { ensureVectorTable } from '../src/vector-table.js';

// Wide enough for the demo embedding's hashing: at 256 dimensions, fillers' words collided with the query's and 5
// of the 200 places the answer can be planted ranked a filler first; at 1,024 the answer's chunk ranks first for
// every place by exact cosine (checked for all 200, the narrowest margin 0.246).
const DIMENSIONS = 1024;
const TOPICS = ['weather', 'gardening', 'trains', 'cooking', 'astronomy', 'music', 'chess', 'sailing', 'painting', 'hiking'];

/** A filler document about one topic, long enough to make several chunks. */
const filler = (index: number) =>
  Array.from(
    { length: 12 },
    (_, sentence) =>
      `Note ${index}.${sentence} on ${TOPICS[(index + sentence) % TOPICS.length]} and ${TOPICS[(index * 3 + sentence) % TOPICS.length]} practice.`,
  ).join(' ');

describe.each(SQL_ENGINES)('knowledge repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<KnowledgeDatabase>;
  let schema: string;
  let repository: KnowledgeRepository;

  const add = async (tenantId: string, collection: string, name: string, text: string) => {
    const texts = chunkText(text, 200, 20);
    const read = (await repository.getCollection(tenantId, collection)) ?? {
      name: collection,
      embeddingProvider: 'demo',
      embeddingModel: 'hash',
      createdAt: new Date(),
    };
    return repository.addDocument(
      tenantId,
      read,
      { id: randomUUID(), name, mediaType: 'text/plain', characters: text.length },
      texts.map((chunk) => ({ text: chunk, embedding: demoEmbedding(chunk, DIMENSIONS) })),
    );
  };
  const search = (tenantId: string, collection: string, query: string, limit = 5) =>
    repository.search(tenantId, collection, demoEmbedding(query, DIMENSIONS), limit);
  const collection = { description: '', embeddingProvider: 'demo', embeddingModel: 'hash' };

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db, schema } = await fixture.storage.open<KnowledgeDatabase>(KNOWLEDGE_SCHEMA, knowledgeMigrations));
    expect(await ensureVectorTable(db, schema, DIMENSIONS)).toEqual({ available: true });
    repository = createKnowledgeRepository(db, schema);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('makes the vector table once, with an HNSW cosine index, however often it is asked', async () => {
    expect(await ensureVectorTable(db, schema, DIMENSIONS)).toEqual({ available: true });
    const indexes = await sql<{
      indexdef: string;
    }>`select indexdef from pg_indexes where schemaname = ${schema} and tablename = 'chunks'`.execute(db);
    expect(indexes.rows.map((row) => row.indexdef).join('\n')).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/);
  });

  it('answers unavailable with the reason, not an error, when the table cannot be made', async () => {
    const failed = await ensureVectorTable(db, 'no_such_schema', DIMENSIONS);
    expect(failed).toMatchObject({ available: false });
    expect(!failed.available && failed.reason).toMatch(/^the chunk table could not be made: /);
  });

  it('finds the planted answer first among 200 documents', async () => {
    expect((await repository.putCollection('t1', 'handbook', collection))?.created).toBe(true);
    const planted = Math.floor(Math.random() * 200);
    for (let index = 0; index < 200; index++) {
      const text =
        index === planted ? `${filler(index)}\n\nThe launch code of Project Falcon is 7-4-1.\n\n${filler(index + 1)}` : filler(index);
      expect(await add('t1', 'handbook', `doc-${index}.txt`, text)).toBeDefined();
    }
    const [first, ...rest] = await search('t1', 'handbook', 'What is the launch code of Project Falcon?');
    expect(first).toMatchObject({ documentName: `doc-${planted}.txt` });
    expect(first.text).toContain('7-4-1');
    expect(rest.length).toBe(4);
    for (const hit of rest) expect(hit.score).toBeLessThan(first.score);
    expect(await repository.getCollection('t1', 'handbook')).toMatchObject({ documents: 200 });
  });

  it('keeps each tenant and collection to its own chunks, even when another holds the nearer ones', async () => {
    await repository.putCollection('t2', 'handbook', collection);
    await repository.putCollection('t1', 'other', collection);
    await add('t2', 'handbook', 'secret.txt', 'The launch code of Project Falcon is 9-9-9 for tenant two.');
    await add('t1', 'other', 'mine.txt', 'Project Falcon launch code notes in another collection.');
    expect((await search('t2', 'handbook', 'launch code of Project Falcon')).map((hit) => hit.documentName)).toEqual(['secret.txt']);
    expect((await search('t1', 'handbook', 'launch code of Project Falcon')).map((hit) => hit.text).join()).not.toContain('9-9-9');
    expect((await search('t1', 'other', 'launch code of Project Falcon')).map((hit) => hit.documentName)).toEqual(['mine.txt']);
    expect(await search('t3', 'handbook', 'launch code')).toEqual([]);
  });

  it('lists documents newest first, deletes one with its chunks, and a collection with everything in it', async () => {
    const documents = await repository.listDocuments('t1', 'handbook', 0, 3);
    expect(documents).toHaveLength(3);
    expect(documents[0].createdAt.getTime()).toBeGreaterThanOrEqual(documents[1].createdAt.getTime());
    expect(await repository.deleteDocument('t2', 'handbook', documents[0].id)).toBe(false);
    expect(await repository.deleteDocument('t1', 'handbook', documents[0].id)).toBe(true);
    const chunksOf = async (documentId: string) =>
      Number(
        (
          await db
            .selectFrom('chunks')
            .select(sql<number>`count(*)`.as('n'))
            .where('document_id', '=', documentId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await chunksOf(documents[0].id)).toBe(0);
    expect(await chunksOf(documents[1].id)).toBeGreaterThan(0);

    expect(await repository.deleteCollection('t1', 'handbook')).toBe(true);
    expect(await chunksOf(documents[1].id)).toBe(0);
    expect(await repository.getCollection('t1', 'handbook')).toBeUndefined();
    expect(await repository.getCollection('t2', 'handbook')).toMatchObject({ documents: 1 });
    // A document for a collection that is gone is not stored.
    expect(await add('t1', 'handbook', 'late.txt', 'too late')).toBeUndefined();
  });

  it('updates a collection’s description and keeps its model', async () => {
    expect((await repository.putCollection('t2', 'handbook', { ...collection, description: 'new words' }))?.created).toBe(false);
    expect(await repository.getCollection('t2', 'handbook')).toMatchObject({ description: 'new words', embeddingModel: 'hash' });
    // A request that read no collection and names another model does not change this one.
    expect(await repository.putCollection('t2', 'handbook', { ...collection, embeddingModel: 'other', description: 'x' })).toBeUndefined();
    expect(await repository.getCollection('t2', 'handbook')).toMatchObject({ description: 'new words', embeddingModel: 'hash' });
  });

  it('stores no document for a collection made again since the upload read it', async () => {
    await repository.putCollection('t2', 'remade', collection);
    const read = (await repository.getCollection('t2', 'remade'))!;
    await repository.deleteCollection('t2', 'remade');
    await repository.putCollection('t2', 'remade', { ...collection, embeddingModel: 'other' });
    const embedded = [{ text: 'old model', embedding: demoEmbedding('old model', DIMENSIONS) }];
    expect(
      await repository.addDocument('t2', read, { id: randomUUID(), name: 'a', mediaType: 'text/plain', characters: 9 }, embedded),
    ).toBeUndefined();
    expect(await repository.getCollection('t2', 'remade')).toMatchObject({ documents: 0 });
    // Made again with the same model: still another collection (its documents went with the old one).
    const again = (await repository.getCollection('t2', 'remade'))!;
    await repository.deleteCollection('t2', 'remade');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await repository.putCollection('t2', 'remade', { ...collection, embeddingModel: 'other' });
    expect(
      await repository.addDocument('t2', again, { id: randomUUID(), name: 'b', mediaType: 'text/plain', characters: 9 }, embedded),
    ).toBeUndefined();
  });

  it('refuses another size while embeddings are stored, and changes an empty table to it', async () => {
    const other = DIMENSIONS / 2;
    const refused = await ensureVectorTable(db, schema, other);
    expect(refused).toMatchObject({ available: false });
    expect(!refused.available && refused.reason).toContain(`${DIMENSIONS} dimensions and Knowledge:Dimensions is ${other}`);
    await db.deleteFrom('collections').execute();
    expect(await ensureVectorTable(db, schema, other)).toEqual({ available: true });
    const column = await sql<{ typmod: number }>`
      select atttypmod as typmod from pg_attribute where attrelid = to_regclass(${`${schema}.chunks`}) and attname = 'embedding'`.execute(
      db,
    );
    expect(column.rows[0].typmod).toBe(other);
  });
});

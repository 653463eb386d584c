import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createKnowledgeRepository,
  createKnowledgeService,
  ensureVectorTable,
  KNOWLEDGE_SCHEMA,
  knowledgeMigrations,
} from '@hangar/knowledge';
import type { KnowledgeDatabase } from '@hangar/knowledge';
import { createStorageProvider } from '@hangar/storage';
import { dropSchemas, TEST_POSTGRES_URL, uniqueSchemaPrefix } from '@hangar/testing';
import { createEmbeddingModels } from '../services/knowledge/src/embeddings/embedding-models.js';

/**
 * Knowledge on each engine, through the service (chunking, the Demo provider's embeddings,
 * storage, search): ingestion throughput in chunks/s, then search latency p50/p99 once the
 * collection holds each size. Documents of CHUNKS_PER_DOCUMENT chunks of Knowledge:ChunkSize
 * characters; queries are random words of the same vocabulary, each answered with
 * Knowledge:MaxResults chunks (HNSW, cosine, pgvector's iterative scan).
 *
 *   BENCH_ENGINES=pglite,postgres  BENCH_SIZES=10000,100000  BENCH_DIMENSIONS=1536  BENCH_QUERIES=200
 */
const ENGINES = (process.env.BENCH_ENGINES ?? 'pglite,postgres').split(',');
const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const DIMENSIONS = Number(process.env.BENCH_DIMENSIONS ?? 1536);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const CHUNK_SIZE = 1000;
const CHUNKS_PER_DOCUMENT = 50;
const caller = { tenantId: 'bench', actor: 'bench' };

/** A vocabulary of made-up words, so every chunk is a different mix. */
const VOCABULARY = Array.from({ length: 5000 }, (_, index) => `w${index.toString(36)}x`);
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const word = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)];

/** CHUNKS_PER_DOCUMENT paragraphs of just under CHUNK_SIZE characters: one chunk each. */
function documentText(): string {
  const paragraphs: string[] = [];
  for (let paragraph = 0; paragraph < CHUNKS_PER_DOCUMENT; paragraph++) {
    let text = '';
    while (text.length < CHUNK_SIZE - 40) text += `${word()} `;
    paragraphs.push(text.trim() + '.');
  }
  return paragraphs.join('\n\n');
}

const percentile = (sorted: number[], share: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))];

async function* bytesOf(text: string) {
  yield Buffer.from(text);
}

for (const engine of ENGINES) {
  const dataDir = engine === 'pglite' ? mkdtempSync(join(tmpdir(), 'hangar-knowledge-bench-')) : undefined;
  const schemaPrefix = uniqueSchemaPrefix();
  const storage = await createStorageProvider({
    postgresConnectionString: engine === 'postgres' ? TEST_POSTGRES_URL : null,
    schemaPrefix,
    embeddedDataDir: dataDir ?? 'memory://',
    autoApplyMigrations: true,
    commandTimeoutSeconds: 600,
  });
  try {
    const { db, schema } = await storage.open<KnowledgeDatabase>(KNOWLEDGE_SCHEMA, knowledgeMigrations);
    const vectors = await ensureVectorTable(db, schema, DIMENSIONS);
    if (!vectors.available) throw new Error(vectors.reason);
    const knowledge = createKnowledgeService({
      repository: createKnowledgeRepository(db, schema),
      vectors: async () => vectors,
      embeddings: createEmbeddingModels(
        { Providers: { demo: { Kind: 'Demo' } as never }, Knowledge: { Dimensions: DIMENSIONS } as never },
        globalThis.fetch,
      ),
      settings: { chunkSize: CHUNK_SIZE, chunkOverlap: 0, maxResults: 5, maxBytes: 64 * 1024 * 1024 },
    });
    await knowledge.putCollection(caller, 'bench', { description: '', embeddingProvider: 'demo', embeddingModel: 'hash' });
    let stored = 0;
    for (const size of SIZES) {
      const started = performance.now();
      const from = stored;
      while (stored < size) {
        const document = await knowledge.addDocument(
          caller,
          { collection: 'bench', name: `doc-${stored}`, file: false },
          bytesOf(documentText()),
        );
        stored += document.chunks;
        if (stored % 10_000 < CHUNKS_PER_DOCUMENT) console.error(`${engine}: ${stored} chunks stored`);
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `${engine} ingestion to ${size} chunks (${DIMENSIONS} dims): ${((stored - from) / seconds).toFixed(0)} chunks/s (${(stored - from).toLocaleString()} chunks in ${seconds.toFixed(1)} s)`,
      );
      const latencies: number[] = [];
      for (let query = 0; query < QUERIES + 10; query++) {
        const text = `${word()} ${word()} ${word()}`;
        const begun = performance.now();
        const results = await knowledge.search(caller, 'bench', text, 5);
        if (query >= 10) latencies.push(performance.now() - begun); // the first ten warm the caches
        if (results.length !== 5) throw new Error(`search answered ${results.length} results, not 5`);
      }
      latencies.sort((a, b) => a - b);
      console.log(
        `${engine} search at ${size} chunks: p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms (${QUERIES} queries, top 5)`,
      );
    }
  } finally {
    await storage.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (engine === 'postgres') await dropSchemas(schemaPrefix);
  }
}

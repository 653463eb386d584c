import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import type { CollectionRecord, KnowledgeRepository } from '../src/knowledge.repository.js';
import { createKnowledgeService, type KnowledgeServiceDeps } from '../src/knowledge.service.js';

const caller = { tenantId: 't1', actor: 'test' };
const settings = { chunkSize: 50, chunkOverlap: 5, maxResults: 3, maxBytes: 100 };
const handbook: CollectionRecord = {
  name: 'handbook',
  description: '',
  embeddingProvider: 'demo',
  embeddingModel: 'hash',
  documents: 0,
  chunks: 0,
  createdAt: new Date(0),
  updatedAt: new Date(0),
};
const bytes = async function* (...parts: string[]) {
  for (const part of parts) yield Buffer.from(part);
};

function service(repository: Partial<KnowledgeRepository>, overrides: Partial<KnowledgeServiceDeps> = {}) {
  return createKnowledgeService({
    repository: strictFake<KnowledgeRepository>('repository', repository),
    vectors: async () => ({ available: true }),
    embeddings: strictFake('embeddings', {
      refusal: (provider: string) => (provider === 'demo' ? undefined : `no provider ${provider}`),
      embed: async (_provider: string, _model: string, texts: string[]) => texts.map(() => [1, 0]),
    }),
    settings,
    ...overrides,
  });
}

describe('knowledge rules', () => {
  it('answers 501 with the reason for documents and search when the store has no vector support', async () => {
    const knowledge = service(
      { getCollection: async () => handbook, listCollections: async () => [handbook] },
      { vectors: async () => ({ available: false, reason: 'no pgvector here' }) },
    );
    await expect(knowledge.addDocument(caller, { collection: 'handbook', name: 'a.txt', file: false }, bytes('x'))).rejects.toMatchObject({
      kind: 'notImplemented',
      message: 'knowledge is unavailable: no pgvector here',
    });
    await expect(knowledge.search(caller, 'handbook', 'query', 0)).rejects.toMatchObject({ kind: 'notImplemented' });
    // Collections themselves are kept and listed.
    expect(await knowledge.listCollections(caller)).toEqual([handbook]);
  });

  it('refuses a collection that would embed with another model than its stored vectors', async () => {
    const knowledge = service({ getCollection: async () => handbook });
    await expect(
      knowledge.putCollection(caller, 'handbook', { description: '', embeddingProvider: 'demo', embeddingModel: 'other' }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    await expect(
      knowledge.putCollection(caller, 'bad name', { description: '', embeddingProvider: 'nowhere', embeddingModel: '' }),
    ).rejects.toMatchObject({
      kind: 'validation',
      extensions: {
        errors: [
          expect.objectContaining({ path: 'name' }),
          expect.objectContaining({ path: 'embeddingProvider', message: 'no provider nowhere' }),
          expect.objectContaining({ path: 'embeddingModel' }),
        ],
      },
    });
  });

  it('stops reading an upload past Attachments:MaxBytes, before embedding or storing anything', async () => {
    const knowledge = service({ getCollection: async () => handbook });
    await expect(
      knowledge.addDocument(caller, { collection: 'handbook', name: 'a.txt', file: false }, bytes('x'.repeat(60), 'y'.repeat(60))),
    ).rejects.toMatchObject({ kind: 'payloadTooLarge' });
  });

  it('refuses a document of more than 4,000 chunks with 413 before embedding it', async () => {
    const knowledge = service({ getCollection: async () => handbook }, { settings: { ...settings, maxBytes: 10_000_000 } });
    const words = 'word '.repeat(45_000); // 225,000 characters: 4,500 chunks of 50
    await expect(
      knowledge.addDocument(caller, { collection: 'handbook', name: 'big.txt', file: false }, bytes(words)),
    ).rejects.toMatchObject({
      kind: 'payloadTooLarge',
      message: expect.stringContaining('at most 4000 per document'),
    });
  });

  it('stores each chunk with its embedding, in order', async () => {
    let stored: Array<{ text: string; embedding: number[] }> = [];
    const knowledge = service({
      getCollection: async () => handbook,
      addDocument: async (_tenant, _collection, document, chunks) => {
        stored = chunks;
        return { ...document, chunks: chunks.length, createdAt: new Date() };
      },
    });
    const text = 'First sentence of the note here. Second sentence of the note here. Third one.';
    const document = await knowledge.addDocument(caller, { collection: 'handbook', name: 'notes.md', file: false }, bytes(text));
    expect(document).toMatchObject({ name: 'notes.md', mediaType: 'text/markdown', characters: text.length });
    expect(stored.length).toBeGreaterThan(1);
    expect(stored.every((chunk) => chunk.text.length <= settings.chunkSize && chunk.embedding.length === 2)).toBe(true);
  });

  it('asks for topK results, never more than Knowledge:MaxResults, and refuses a blank query', async () => {
    const limits: number[] = [];
    const knowledge = service({
      getCollection: async () => handbook,
      search: async (_tenant, _collection, _embedding, limit) => (limits.push(limit), []),
    });
    await knowledge.search(caller, 'handbook', 'query', 0);
    await knowledge.search(caller, 'handbook', 'query', 2);
    await knowledge.search(caller, 'handbook', 'query', 50);
    expect(limits).toEqual([3, 2, 3]);
    await expect(knowledge.search(caller, 'handbook', '  ', 0)).rejects.toMatchObject({ kind: 'validation' });
  });
});

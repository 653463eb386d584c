import { randomUUID } from 'node:crypto';
import { HangarError, notFound, validationError, type Caller, type FieldError, RECORD_NAME, RECORD_NAME_RULE } from '@hangar/platform';
import { chunkText } from './documents/chunking.js';
import { extractDocumentText, textMediaType } from './documents/text-extraction.js';
import type { EmbeddingModels } from './embeddings/embedding-models.js';
import type { CollectionRecord, DocumentRecord, KnowledgeRepository, SearchHit } from './knowledge.repository.js';
import type { VectorSupport } from './vector-table.js';

/** The `Knowledge` section, narrowed to what this service reads. */
export interface KnowledgeSettings {
  chunkSize: number;
  chunkOverlap: number;
  maxResults: number;
  /** Attachments:MaxBytes: the largest document upload. */
  maxBytes: number;
}

export interface KnowledgeServiceDeps {
  repository: KnowledgeRepository;
  /** Whether documents can be stored and searched now (asked before each). */
  vectors: () => Promise<VectorSupport>;
  embeddings: Pick<EmbeddingModels, 'refusal' | 'embed'>;
  settings: KnowledgeSettings;
}

export interface CollectionInput {
  description: string;
  embeddingProvider: string;
  embeddingModel: string;
}

export interface DocumentHeader {
  collection: string;
  name: string;
  /** An uploaded file (read by its signature or name); otherwise the UTF-8 text of a JSON upload. */
  file: boolean;
}

const MAX_DESCRIPTION = 2000;
const MAX_DOCUMENT_NAME = 256;
const MAX_QUERY = 8000;
const MAX_TAKE = 200;
/**
 * Chunks one document may make (~4 MB of text at the default ChunkSize): its vectors are held in
 * memory and stored in one transaction, so a larger text is refused (413) rather than risking the
 * process; split it into several documents.
 */
const MAX_CHUNKS_PER_DOCUMENT = 4000;

/**
 * Knowledge rules: collections bound to an embedding model, documents cut into chunks and
 * embedded on upload, and search by cosine distance. Documents and search need vector support in
 * the store (501 with the reason otherwise); every record is the caller's tenant's only.
 */
export function createKnowledgeService(deps: KnowledgeServiceDeps) {
  const { repository, settings } = deps;

  async function requireVectors() {
    const support = await deps.vectors();
    if (!support.available) throw new HangarError('notImplemented', `knowledge is unavailable: ${support.reason}`);
  }

  async function collectionOf(caller: Caller, name: string): Promise<CollectionRecord> {
    const collection = RECORD_NAME.test(name) ? await repository.getCollection(caller.tenantId, name) : undefined;
    if (!collection) throw notFound(`collection "${name}" not found`);
    return collection;
  }

  return {
    async putCollection(caller: Caller, name: string, input: CollectionInput): Promise<{ collection: CollectionRecord; created: boolean }> {
      const errors: FieldError[] = [];
      if (!RECORD_NAME.test(name)) errors.push({ path: 'name', message: RECORD_NAME_RULE });
      if (input.description.length > MAX_DESCRIPTION)
        errors.push({ path: 'description', message: `is over ${MAX_DESCRIPTION} characters` });
      const refusal = deps.embeddings.refusal(input.embeddingProvider);
      if (refusal) errors.push({ path: 'embeddingProvider', message: refusal });
      if (!input.embeddingModel.trim()) errors.push({ path: 'embeddingModel', message: 'is required' });
      if (errors.length) throw validationError('the collection is not valid', errors);
      const existing = await repository.getCollection(caller.tenantId, name);
      // The stored vectors are the model's: another model's query vectors would not compare with them.
      if (existing && (existing.embeddingProvider !== input.embeddingProvider || existing.embeddingModel !== input.embeddingModel)) {
        throw new HangarError(
          'conflict',
          `collection "${name}" embeds with ${existing.embeddingProvider}/${existing.embeddingModel}; its documents would not compare with another model's: delete it and make it again to change the model`,
        );
      }
      const saved = await repository.putCollection(caller.tenantId, name, input);
      // Another request made it meanwhile with another model.
      if (!saved) throw new HangarError('conflict', `collection "${name}" was made meanwhile with another embedding model`);
      return { collection: await collectionOf(caller, name), created: saved.created };
    },

    getCollection: collectionOf,

    listCollections: (caller: Caller) => repository.listCollections(caller.tenantId),

    async deleteCollection(caller: Caller, name: string): Promise<void> {
      if (!RECORD_NAME.test(name) || !(await repository.deleteCollection(caller.tenantId, name)))
        throw notFound(`collection "${name}" not found`);
    },

    /**
     * Reads the content (at most Attachments:MaxBytes), extracts its text, chunks, embeds and
     * stores it; the document is stored whole or not at all.
     */
    async addDocument(
      caller: Caller,
      header: DocumentHeader,
      content: AsyncIterable<Uint8Array>,
      signal?: AbortSignal,
    ): Promise<DocumentRecord> {
      await requireVectors();
      const collection = await collectionOf(caller, header.collection);
      const name = header.name.trim();
      if (!name || name.length > MAX_DOCUMENT_NAME) {
        throw validationError('the document is not valid', [{ path: 'name', message: `must be 1–${MAX_DOCUMENT_NAME} characters` }]);
      }
      const bytes = await readAtMost(content, settings.maxBytes);
      const extracted = header.file
        ? await extractDocumentText(name, bytes)
        : { mediaType: textMediaType(name), text: bytes.toString('utf8') };
      const texts = chunkText(extracted.text, settings.chunkSize, settings.chunkOverlap);
      if (!texts.length)
        throw validationError('the document has no text', [{ path: header.file ? 'file' : 'text', message: 'holds no text' }]);
      if (texts.length > MAX_CHUNKS_PER_DOCUMENT) {
        throw new HangarError(
          'payloadTooLarge',
          `the document makes ${texts.length} chunks, at most ${MAX_CHUNKS_PER_DOCUMENT} per document: split it into several documents`,
        );
      }
      const embeddings = await deps.embeddings.embed(collection.embeddingProvider, collection.embeddingModel, texts, signal);
      const document = await repository.addDocument(
        caller.tenantId,
        collection,
        { id: randomUUID(), name, mediaType: extracted.mediaType, characters: extracted.text.length },
        texts.map((text, index) => ({ text, embedding: embeddings[index] })),
      );
      // Deleted while its chunks were embedded, or deleted and made again (perhaps with another model).
      if (!document) throw notFound(`collection "${header.collection}" not found`);
      return document;
    },

    async listDocuments(caller: Caller, collectionName: string, skip: number, take: number): Promise<DocumentRecord[]> {
      const collection = await collectionOf(caller, collectionName);
      return repository.listDocuments(caller.tenantId, collection.name, Math.max(0, skip), Math.min(Math.max(take || 50, 1), MAX_TAKE));
    },

    async deleteDocument(caller: Caller, collectionName: string, id: string): Promise<void> {
      const collection = await collectionOf(caller, collectionName);
      if (!(await repository.deleteDocument(caller.tenantId, collection.name, id))) throw notFound(`document ${id} not found`);
    },

    /** The chunks nearest the query, at most topK (0: Knowledge:MaxResults; more is cut to it). */
    async search(caller: Caller, collectionName: string, query: string, topK: number, signal?: AbortSignal): Promise<SearchHit[]> {
      await requireVectors();
      const errors: FieldError[] = [];
      if (!query.trim()) errors.push({ path: 'query', message: 'is required' });
      if (query.length > MAX_QUERY) errors.push({ path: 'query', message: `is over ${MAX_QUERY} characters` });
      if (topK < 0) errors.push({ path: 'topK', message: 'must be at least 1' });
      if (errors.length) throw validationError('the search is not valid', errors);
      const collection = await collectionOf(caller, collectionName);
      const [embedding] = await deps.embeddings.embed(collection.embeddingProvider, collection.embeddingModel, [query], signal);
      return repository.search(caller.tenantId, collection.name, embedding, Math.min(topK || settings.maxResults, settings.maxResults));
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;

async function readAtMost(content: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of content) {
    size += part.byteLength;
    if (size > maxBytes) throw new HangarError('payloadTooLarge', `the document is larger than ${maxBytes} bytes (Attachments:MaxBytes)`);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

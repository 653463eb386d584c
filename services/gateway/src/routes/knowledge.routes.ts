import type { knowledgePb as pb } from '@hangar/contracts';
import { HangarError } from '@hangar/platform';
import { z } from 'zod';
import { FILE_PART_BODY, locationHeader, pageNumber, problemResponse } from '../api.schemas.js';
import { receiveFilePart } from '../http/multipart.js';
import { defineRoute, parseOrThrow, requireJsonBody } from '../http/route.js';

const TAG = 'Knowledge';

const CollectionRequestSchema = z
  .strictObject({
    description: z.string().max(2000).optional(),
    embeddingProvider: z.string().min(1).describe('A provider of Providers:{name} that makes embeddings (not Anthropic)'),
    embeddingModel: z.string().min(1).describe('Its embedding model; fixed once the collection exists'),
  })
  .meta({ id: 'KnowledgeCollectionRequest' });

const CollectionSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    embeddingProvider: z.string(),
    embeddingModel: z.string(),
    documents: z.number().int(),
    chunks: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeCollection' });

const DocumentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    mediaType: z.enum(['text/plain', 'text/markdown', 'application/pdf']),
    chunks: z.number().int(),
    characters: z.number().int(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeDocument' });

const TextDocumentSchema = z
  .strictObject({
    name: z.string().min(1).max(256).describe('Read as Markdown when it ends in .md'),
    text: z.string().min(1),
  })
  .meta({ id: 'KnowledgeTextDocument' });

const SearchRequestSchema = z
  .strictObject({
    query: z.string().min(1).max(8000),
    topK: z.number().int().min(1).max(1000).optional().describe('At most Knowledge:MaxResults (the default)'),
  })
  .meta({ id: 'KnowledgeSearchRequest' });

const SearchResultsSchema = z
  .object({
    results: z
      .object({
        documentId: z.string(),
        documentName: z.string(),
        chunk: z.number().int().describe('The chunk’s position in its document, from 0'),
        score: z.number().describe('1 − cosine distance to the query'),
        text: z.string(),
      })
      .array(),
  })
  .meta({ id: 'KnowledgeSearchResults' });

const CollectionParams = z.object({ collection: z.string() });
const DocumentParams = z.object({ collection: z.string(), id: z.string() });
const UNAVAILABLE = problemResponse('The store has no vector support (pgvector)');

const collectionJson = (collection: pb.KnowledgeCollection) => ({
  name: collection.name,
  description: collection.description,
  embeddingProvider: collection.embeddingProvider,
  embeddingModel: collection.embeddingModel,
  documents: collection.documents,
  chunks: collection.chunks,
  createdAt: collection.createdAt!,
  updatedAt: collection.updatedAt!,
});

const documentJson = (document: pb.KnowledgeDocument) => ({
  id: document.id,
  name: document.name,
  mediaType: document.mediaType as z.infer<typeof DocumentSchema>['mediaType'],
  chunks: document.chunks,
  characters: document.characters,
  createdAt: document.createdAt!,
});

/** One gRPC message of a document's content. */
const CHUNK_BYTES = 64 * 1024;

/** API.md "Knowledge": collections of documents, embedded and searched by the knowledge service. */
export const knowledgeRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/knowledge',
    operationId: 'listKnowledgeCollections',
    summary: 'List knowledge collections',
    description: 'Returns the tenant’s knowledge collections by name, each with its embedding model and its document and chunk counts.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'KnowledgeRead' },
    responses: { 200: { description: 'Collections', schema: CollectionSchema.array() } },
    async handler({ caller }, { knowledge }) {
      return { status: 200, body: (await knowledge.listCollections({}, { caller })).collections.map(collectionJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/knowledge/{collection}',
    operationId: 'getKnowledgeCollection',
    summary: 'Get a knowledge collection',
    description: 'Returns one collection with its document and chunk counts. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'KnowledgeRead' },
    params: CollectionParams,
    responses: { 200: { description: 'The collection', schema: CollectionSchema }, 404: problemResponse('No such collection') },
    async handler({ params, caller }, { knowledge }) {
      return { status: 200, body: collectionJson((await knowledge.getCollection({ name: params.collection }, { caller })).collection!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/knowledge/{collection}',
    operationId: 'putKnowledgeCollection',
    summary: 'Create or describe a knowledge collection',
    description:
      'Creates a collection bound to an embedding provider and model (201), or changes its description (200). A provider that is not configured or makes no embeddings is 400; another provider or model for an existing collection is 409, since its stored vectors would not compare with the new model’s.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'KnowledgeAdmin' },
    params: CollectionParams,
    body: CollectionRequestSchema,
    responses: {
      200: { description: 'Updated', schema: CollectionSchema },
      201: { description: 'Created', schema: CollectionSchema },
      400: problemResponse('Invalid name, or a provider that makes no embeddings'),
      409: problemResponse('The collection embeds with another provider or model'),
    },
    async handler({ params, body, caller }, { knowledge }) {
      const { collection, created } = await knowledge.putCollection(
        {
          name: params.collection,
          description: body.description ?? '',
          embeddingProvider: body.embeddingProvider,
          embeddingModel: body.embeddingModel,
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: collectionJson(collection!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/knowledge/{collection}',
    operationId: 'deleteKnowledgeCollection',
    summary: 'Delete a knowledge collection',
    description: 'Deletes the collection with its documents and their embeddings. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'KnowledgeAdmin' },
    params: CollectionParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No such collection') },
    async handler({ params, caller }, { knowledge }) {
      await knowledge.deleteCollection({ name: params.collection }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/knowledge/{collection}/documents',
    operationId: 'addKnowledgeDocument',
    summary: 'Add a document to a knowledge collection',
    description:
      'Takes a file as multipart/form-data (part `file`: UTF-8 text, Markdown by a .md name, or a PDF by its signature; up to Attachments:MaxBytes) or JSON `{ name, text }` (up to 1 MiB), cuts its text into chunks (Knowledge:ChunkSize, Knowledge:ChunkOverlap), embeds them with the collection’s model and stores them, all before answering 201. A file of another type is 415; one over the limit 413; an embedding model that fails 503, storing nothing.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'KnowledgeAdmin' },
    params: CollectionParams,
    documentedBody: { ...FILE_PART_BODY, json: TextDocumentSchema },
    responses: {
      201: {
        description: 'The stored document',
        schema: DocumentSchema,
        headers: { Location: locationHeader('The collection’s documents, {prefix}/api/knowledge/{collection}/documents') },
      },
      404: problemResponse('No such collection'),
      413: problemResponse('Larger than Attachments:MaxBytes'),
      415: problemResponse('Neither multipart/form-data nor JSON, or a file that is neither text nor PDF'),
      501: UNAVAILABLE,
      503: problemResponse('The embedding model failed'),
    },
    async handler({ params, caller, request, signal }, { knowledge, config }) {
      const upload = (name: string, file: boolean, bytes: AsyncIterable<Uint8Array>, uploadSignal: AbortSignal) => {
        async function* parts(): AsyncIterable<pb.AddDocumentRequest> {
          yield { part: { $case: 'header', value: { collection: params.collection, name, file } } };
          for await (const chunk of bytes) yield { part: { $case: 'chunk', value: chunk as Buffer } };
        }
        return knowledge.addDocument(parts(), { caller, signal: uploadSignal });
      };
      let answer: pb.AddDocumentResponse;
      if (request.is('multipart/form-data')) {
        answer = await receiveFilePart(request, (fileName, bytes, uploadSignal) => upload(fileName, true, bytes, uploadSignal));
      } else if (request.is('application/json')) {
        const parsed = parseOrThrow(TextDocumentSchema, requireJsonBody(request), 'body');
        const text = Buffer.from(parsed.text, 'utf8');
        answer = await upload(parsed.name, false, piecesOf(text), signal);
      } else {
        throw new HangarError(
          'unsupportedMediaType',
          'send the document as multipart/form-data with a `file` part, or as JSON { name, text }',
        );
      }
      return {
        status: 201,
        body: documentJson(answer.document!),
        headers: { Location: `${config.Hangar.Api.Prefix}/api/knowledge/${encodeURIComponent(params.collection)}/documents` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/knowledge/{collection}/documents',
    operationId: 'listKnowledgeDocuments',
    summary: 'List the documents of a knowledge collection',
    description: 'Returns the collection’s documents, newest first, with take clamped to 1..200. An unknown collection is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'KnowledgeRead' },
    params: CollectionParams,
    query: z.object({ skip: pageNumber(0), take: pageNumber(50) }),
    responses: { 200: { description: 'Documents', schema: DocumentSchema.array() }, 404: problemResponse('No such collection') },
    async handler({ params, query, caller }, { knowledge }) {
      const { documents } = await knowledge.listDocuments(
        { collection: params.collection, skip: query.skip, take: query.take },
        { caller },
      );
      return { status: 200, body: documents.map(documentJson) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/knowledge/{collection}/documents/{id}',
    operationId: 'deleteKnowledgeDocument',
    summary: 'Delete a document of a knowledge collection',
    description: 'Deletes the document with its chunks and their embeddings. An unknown collection or document is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'KnowledgeAdmin' },
    params: DocumentParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No such collection or document') },
    async handler({ params, caller }, { knowledge }) {
      await knowledge.deleteDocument({ collection: params.collection, id: params.id }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/knowledge/{collection}/search',
    operationId: 'searchKnowledge',
    summary: 'Search a knowledge collection',
    description:
      'Embeds the query with the collection’s model and returns the nearest chunks by cosine distance, nearest first: at most topK, never more than Knowledge:MaxResults (the default).',
    tag: TAG,
    auth: { role: 'Reader', scope: 'KnowledgeRead' },
    params: CollectionParams,
    body: SearchRequestSchema,
    responses: {
      200: { description: 'The nearest chunks', schema: SearchResultsSchema },
      404: problemResponse('No such collection'),
      501: UNAVAILABLE,
      503: problemResponse('The embedding model failed'),
    },
    async handler({ params, body, caller, signal }, { knowledge }) {
      const { results } = await knowledge.search(
        { collection: params.collection, query: body.query, topK: body.topK ?? 0 },
        { caller, signal },
      );
      return { status: 200, body: { results } };
    },
  }),
];

async function* piecesOf(bytes: Buffer): AsyncIterable<Uint8Array> {
  for (let start = 0; start < bytes.length; start += CHUNK_BYTES) yield bytes.subarray(start, start + CHUNK_BYTES);
}

import type { knowledgePb as pb } from '@hangar/contracts';
import { splitStreamedUpload, type CallerContext } from '@hangar/platform';
import type { CollectionRecord, DocumentRecord } from './knowledge.repository.js';
import type { KnowledgeService } from './knowledge.service.js';

const collectionToProto = (collection: CollectionRecord): pb.KnowledgeCollection => ({
  name: collection.name,
  description: collection.description,
  embeddingProvider: collection.embeddingProvider,
  embeddingModel: collection.embeddingModel,
  documents: collection.documents,
  chunks: collection.chunks,
  createdAt: collection.createdAt.toISOString(),
  updatedAt: collection.updatedAt.toISOString(),
});

const documentToProto = (document: DocumentRecord): pb.KnowledgeDocument => ({
  id: document.id,
  name: document.name,
  mediaType: document.mediaType,
  chunks: document.chunks,
  characters: document.characters,
  createdAt: document.createdAt.toISOString(),
});

/** gRPC ↔ knowledge rules; translation only. */
export function knowledgeGrpc(knowledge: KnowledgeService): pb.KnowledgeServiceImplementation<CallerContext> {
  return {
    async putCollection(request, { caller }) {
      const { collection, created } = await knowledge.putCollection(caller, request.name, {
        description: request.description,
        embeddingProvider: request.embeddingProvider,
        embeddingModel: request.embeddingModel,
      });
      return { collection: collectionToProto(collection), created };
    },
    async getCollection({ name }, { caller }) {
      return { collection: collectionToProto(await knowledge.getCollection(caller, name)) };
    },
    async listCollections(_request, { caller }) {
      return { collections: (await knowledge.listCollections(caller)).map(collectionToProto) };
    },
    async deleteCollection({ name }, { caller }) {
      await knowledge.deleteCollection(caller, name);
      return {};
    },
    async addDocument(requests, { caller, signal }) {
      const { header, chunks } = await splitStreamedUpload(requests);
      return { document: documentToProto(await knowledge.addDocument(caller, header, chunks, signal)) };
    },
    async listDocuments(request, { caller }) {
      return { documents: (await knowledge.listDocuments(caller, request.collection, request.skip, request.take)).map(documentToProto) };
    },
    async deleteDocument(request, { caller }) {
      await knowledge.deleteDocument(caller, request.collection, request.id);
      return {};
    },
    async search(request, { caller, signal }) {
      return { results: await knowledge.search(caller, request.collection, request.query, request.topK, signal) };
    },
  };
}

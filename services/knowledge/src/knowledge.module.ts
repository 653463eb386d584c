import { KnowledgeServiceDefinition, RetentionServiceDefinition } from '@hangar/contracts';
import { createDirectFetch, grpcServiceModule, retentionGrpc } from '@hangar/platform';
import { createEmbeddingModels } from './embeddings/embedding-models.js';
import { knowledgeGrpc } from './knowledge.grpc.js';
import { createKnowledgeRepository, type KnowledgeDatabase } from './knowledge.repository.js';
import { createKnowledgeService } from './knowledge.service.js';
import { KNOWLEDGE_SCHEMA, knowledgeMigrations } from './migrations/index.js';
import { KNOWLEDGE_RETENTION_TARGETS } from './retention-targets.js';
import { ensureVectorTable, watchVectorTable } from './vector-table.js';

export const knowledgeModule = grpcServiceModule({
  name: 'Knowledge',
  async setup({ config, engines, logger }, grpc) {
    const database = await engines.storage.open<KnowledgeDatabase>(KNOWLEDGE_SCHEMA, knowledgeMigrations);
    const vectors = watchVectorTable(() => ensureVectorTable(database.db, database.schema, config.Knowledge.Dimensions), logger);
    await vectors();
    // The providers are the operator's configuration, which may rightly name a private endpoint (as for runs).
    const egress = createDirectFetch();
    const service = createKnowledgeService({
      repository: createKnowledgeRepository(database.db, database.schema),
      vectors,
      embeddings: createEmbeddingModels(config, egress.fetch),
      settings: {
        chunkSize: config.Knowledge.ChunkSize,
        chunkOverlap: config.Knowledge.ChunkOverlap,
        maxResults: config.Knowledge.MaxResults,
        maxBytes: config.Attachments.MaxBytes,
      },
    });
    grpc.server.add(KnowledgeServiceDefinition, knowledgeGrpc(service));
    grpc.server.add(RetentionServiceDefinition, retentionGrpc(database, KNOWLEDGE_RETENTION_TARGETS));
    return { close: () => egress.close() };
  },
});

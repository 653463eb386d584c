export { knowledgeModule } from './knowledge.module.js';
export { createKnowledgeService, type KnowledgeService } from './knowledge.service.js';
export { createKnowledgeRepository, type KnowledgeDatabase, type KnowledgeRepository } from './knowledge.repository.js';
export { KNOWLEDGE_SCHEMA, knowledgeMigrations } from './migrations/index.js';
export { ensureVectorTable } from './vector-table.js';

export { agentRegistryModule } from './agent-registry.module.js';
export { createAgentRegistryService, type AgentRegistryService } from './agent-registry.service.js';
export { createAgentRepository, type AgentRepository, type RegistryDatabase } from './agent.repository.js';
export { REGISTRY_SCHEMA, registryMigrations } from './migrations/index.js';
export { createCatalog } from './catalog.js';

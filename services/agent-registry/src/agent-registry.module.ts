import { AgentRegistryServiceDefinition, SkillServiceDefinition } from '@hangar/contracts';
import { createChannel, createServiceClient, grpcServiceModule, type Caller } from '@hangar/platform';
import { createAgentRepository, type RegistryDatabase } from './agent.repository.js';
import { agentRegistryGrpc } from './agent-registry.grpc.js';
import { createAgentRegistryService } from './agent-registry.service.js';
import { createCatalog } from './catalog.js';
import { loadCodeAgents } from './code-agents.loader.js';
import { registryMigrations } from './migrations/index.js';

export const agentRegistryModule = grpcServiceModule({
  name: 'AgentRegistry',
  dependsOn: ['Skill'],
  async setup({ config, engines, addressOf }, grpc) {
    const database = await engines.storage.open<RegistryDatabase>('registry', registryMigrations);
    const skillChannel = createChannel(addressOf('Skill'));
    const skills = createServiceClient(SkillServiceDefinition, skillChannel);
    const service = createAgentRegistryService({
      repository: createAgentRepository(database.db),
      catalog: createCatalog(config),
      codeAgents: await loadCodeAgents(config.CodeAgents.Modules),
      maxSkillsPerAgent: config.Skills.MaxSkillsPerAgent,
      reserveRatio: config.Preflight.ReserveRatio,
      findSkills: async (caller: Caller, names: string[]) => new Set((await skills.findSkills({ names }, { caller })).existing),
    });
    grpc.server.add(AgentRegistryServiceDefinition, agentRegistryGrpc(service));
    return { close: async () => skillChannel.close() };
  },
});

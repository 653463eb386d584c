import {
  AGENT_CHANGES_CHANNEL,
  AGENT_CHANGES_TOPIC,
  agentCacheKey,
  AgentRegistryServiceDefinition,
  SkillServiceDefinition,
  ToolServerServiceDefinition,
  type AgentChange,
} from '@hangar/contracts';
import { createOutboxRelay } from '@hangar/messaging';
import {
  createChannel,
  createGuardedFetch,
  createServiceClient,
  grpcServiceModule,
  mcpSecretResolver,
  type Caller,
} from '@hangar/platform';
import { createAgentRepository, type RegistryDatabase } from './agent.repository.js';
import { knowledgeReferenceCheck } from './knowledge-references.js';
import { agentRegistryGrpc } from './agent-registry.grpc.js';
import { createAgentRegistryService } from './agent-registry.service.js';
import { createCatalog } from './catalog.js';
import { loadCodeAgents } from './code-agents.loader.js';
import { REGISTRY_SCHEMA, registryMigrations } from './migrations/index.js';
import { startToolServerRefresher } from './tool-servers/tool-server-refresher.js';
import { createToolServerRepository } from './tool-servers/tool-server.repository.js';
import { createToolServerService } from './tool-servers/tool-server.service.js';
import { toolServerGrpc } from './tool-servers/tool-servers.grpc.js';

// Changes reach the event log within ~20 ms of their commit here, within a second otherwise.
const OUTBOX_SETTINGS = { pollIntervalMs: 1000, batchDelayMs: 20, batchSize: 500, leaseMs: 30_000 };

export const agentRegistryModule = grpcServiceModule({
  name: 'AgentRegistry',
  dependsOn: ['Skill', 'Knowledge'],
  async setup({ config, engines, logger, addressOf }, grpc) {
    const database = await engines.storage.open<RegistryDatabase>(REGISTRY_SCHEMA, registryMigrations);
    // As with run events: a durable event log is fed through the outbox, an in-process one directly.
    const outbox = engines.eventLog.kind !== 'memory';
    const repository = createAgentRepository(database.db, { outbox });
    const relay = outbox
      ? createOutboxRelay({
          shipOutbox: repository.shipOutbox,
          eventLog: engines.eventLog,
          topic: AGENT_CHANGES_TOPIC,
          onError: (error) => logger.warn({ err: error }, 'agent changes could not be shipped to the event log; they stay in the outbox'),
          settings: OUTBOX_SETTINGS,
        })
      : undefined;
    relay?.start();
    const changed = async (change: AgentChange) => {
      // Announced before the change is answered, so a run started after the answer sees it (run executors cache agents).
      await engines.pubsub
        .publish(AGENT_CHANGES_CHANNEL, JSON.stringify({ id: agentCacheKey(change.tenantId, change.name) }))
        .catch((error) =>
          logger.warn(
            { err: error, agent: change.name },
            'agent change could not be announced; executors learn it when their cache expires',
          ),
        );
      if (relay) return relay.nudge();
      engines.eventLog
        .append(AGENT_CHANGES_TOPIC, [{ key: `${change.tenantId}/${change.name}`, value: JSON.stringify(change) }])
        .catch((error) => logger.warn({ err: error, agent: change.name }, 'agent change could not be handed to the event log'));
    };
    const skillChannel = createChannel(addressOf('Skill'));
    const knowledgeChannel = createChannel(addressOf('Knowledge'));
    const skills = createServiceClient(SkillServiceDefinition, skillChannel);
    const { Mcp } = config;
    const mcpFetch = createGuardedFetch({ allowPrivateNetworkTargets: config.Egress.AllowPrivateNetworkTargets });
    const toolServers = createToolServerService({
      repository: createToolServerRepository(database.db),
      discovery: {
        fetch: mcpFetch.fetch,
        timeoutMs: Mcp.ConnectionTimeout,
        maxTools: Mcp.MaxToolsPerServer,
        secret: mcpSecretResolver(config),
      },
      allowPrivateNetworkTargets: config.Egress.AllowPrivateNetworkTargets,
      secretsPrefix: Mcp.McpSecretsPrefix,
      validationTimeoutMs: config.Validation.McpTimeout,
      enabled: Mcp.Enabled,
      logger,
    });
    const service = createAgentRegistryService({
      repository,
      changed,
      catalog: createCatalog(config),
      codeAgents: await loadCodeAgents(config.CodeAgents.Modules),
      maxSkillsPerAgent: config.Skills.MaxSkillsPerAgent,
      reserveRatio: config.Preflight.ReserveRatio,
      findSkills: async (caller: Caller, names: string[]) => new Set((await skills.findSkills({ names }, { caller })).existing),
      checkMcpTools: toolServers.checkReferences,
      checkKnowledgeTools: knowledgeReferenceCheck(knowledgeChannel, config.Validation.McpTimeout),
      mcpTools: toolServers.catalogTools,
    });
    grpc.server.add(AgentRegistryServiceDefinition, agentRegistryGrpc(service));

    grpc.server.add(ToolServerServiceDefinition, toolServerGrpc(toolServers));
    if (!Mcp.Enabled) logger.warn('Mcp:Enabled is false: tool servers are kept, but none is connected and agents get no MCP tool');
    const refresher = Mcp.Enabled ? startToolServerRefresher(toolServers, Mcp.RefreshInterval, logger) : undefined;
    return {
      close: async () => {
        await refresher?.stop();
        await mcpFetch.close();
        await relay?.stop();
        skillChannel.close();
        knowledgeChannel.close();
      },
    };
  },
});

import {
  AgentDefinitionInputSchema,
  definitionFromProto,
  normalizeDefinition,
  recordToProto,
  registryPb as pb,
  reportToProto,
  jsonPath,
  type AgentDefinition,
} from '@hangar/contracts';
import { validationError, type CallerContext } from '@hangar/platform';
import type { AgentDescriptor, AgentRegistryService } from './agent-registry.service.js';

const ORIGIN = { Code: pb.AgentOrigin.AGENT_ORIGIN_CODE, Database: pb.AgentOrigin.AGENT_ORIGIN_DATABASE } as const;

/**
 * gRPC callers other than the gateway get the same shape checks as HTTP clients: the message is
 * turned back into the API shape and parsed with the shared schema.
 */
function definitionOf(message: pb.AgentDefinition | undefined): AgentDefinition {
  if (!message) throw validationError('definition is required', [{ path: 'definition', message: 'is required' }]);
  const parsed = AgentDefinitionInputSchema.safeParse(definitionFromProto(message));
  if (!parsed.success) {
    throw validationError(
      'the agent definition is not valid',
      parsed.error.issues.map((issue) => ({ path: jsonPath(issue.path), message: issue.message })),
    );
  }
  return normalizeDefinition(parsed.data);
}

const descriptorToProto = (agent: AgentDescriptor): pb.AgentDescriptor => ({
  name: agent.name,
  description: agent.description ?? undefined,
  origin: ORIGIN[agent.origin],
  model: agent.model ?? undefined,
  version: agent.version ?? undefined,
  updatedAt: agent.updatedAt ?? undefined,
});

/** Translates AgentRegistryService calls to the service's rules; nothing else happens here. */
export function agentRegistryGrpc(service: AgentRegistryService): pb.AgentRegistryServiceImplementation<CallerContext> {
  return {
    async listAgents(_request, { caller }) {
      return { agents: (await service.list(caller)).map(descriptorToProto) };
    },
    async getAgent({ name }, { caller }) {
      const detail = await service.get(caller, name);
      return {
        name: detail.name,
        origin: ORIGIN[detail.origin],
        isEditable: detail.isEditable,
        definition: detail.definition ? recordToProto(detail.definition) : undefined,
        factoryInstructions: detail.factoryInstructions ?? undefined,
        catalog: {
          description: detail.catalog.description ?? undefined,
          model: detail.catalog.model ?? undefined,
          tools: detail.catalog.tools,
          skills: detail.catalog.skills,
          agents: detail.catalog.agents,
        },
      };
    },
    async createAgent({ definition }, { caller }) {
      return { agent: recordToProto(await service.create(caller, definitionOf(definition))) };
    },
    async updateAgent({ name, definition }, { caller }) {
      return { agent: recordToProto(await service.update(caller, name, definitionOf(definition))) };
    },
    async deleteAgent({ name }, { caller }) {
      await service.delete(caller, name);
      return {};
    },
    async validateAgent({ definition }, { caller }) {
      return reportToProto(await service.validate(caller, definitionOf(definition)));
    },
    async listAgentVersions({ name }, { caller }) {
      return { versions: (await service.versions(caller, name)).map(recordToProto) };
    },
    async rollbackAgent({ name, version }, { caller }) {
      return { agent: recordToProto(await service.rollback(caller, name, version)) };
    },
    async diffAgentVersions({ name, leftVersion, rightVersion }, { caller }) {
      const { left, right } = await service.diff(caller, name, leftVersion, rightVersion);
      return { left: recordToProto(left), right: recordToProto(right) };
    },
    async listModels() {
      return {
        models: service.models().map((model) => ({
          ...model,
          contextWindowTokens: model.contextWindowTokens ?? undefined,
          maxOutputTokens: model.maxOutputTokens ?? undefined,
        })),
      };
    },
    async listTools(_request, { caller }) {
      return { tools: await service.tools(caller) };
    },
    async resolveAgent({ name, version: asked }, { caller }) {
      const { definition, version } = await service.resolve(caller, name, asked);
      return { agent: recordToProto({ definition, version: version ?? undefined }) };
    },
    async estimateRun({ name, messages, parameters }, { caller }) {
      const estimate = await service.estimate(caller, name, messages, new Map(Object.entries(parameters)));
      return {
        ...estimate,
        contextWindowTokens: estimate.contextWindowTokens ?? undefined,
        allowedPromptTokens: estimate.allowedPromptTokens ?? undefined,
      };
    },
  };
}

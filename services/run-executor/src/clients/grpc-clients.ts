import {
  AgentRegistryServiceDefinition,
  AttachmentServiceDefinition,
  GovernanceServiceDefinition,
  KnowledgeServiceDefinition,
  SkillServiceDefinition,
  recordFromProto,
  SessionServiceDefinition,
  ToolServerServiceDefinition,
  toolServerTransportFromProto,
} from '@hangar/contracts';
import { createChannel, createServiceClient, HangarError, type ServiceName } from '@hangar/platform';
import type {
  AgentLoader,
  AttachmentReader,
  AttachmentWriter,
  AuditWriter,
  SessionGateway,
  SkillGateway,
  SpendQuotaGateway,
  TenantSettingsSource,
  ToolCatalog,
} from './ports.js';
import type { KnowledgeGateway } from '../knowledge/knowledge-tools.js';
import type { ToolServerLookup } from '../mcp/mcp-tools.js';

import type { GovernanceAdmission } from './quota-coverage.js';

const TOOL_CATALOG_TTL_MS = 60_000;
/** How long a run waits, as it starts, for the knowledge service to describe a collection its agent searches. */
const KNOWLEDGE_LOOKUP_TIMEOUT_MS = 2_000;
const UPLOAD_PIECE_BYTES = 256 * 1024;

/** How long a run waits for governance to name its tenant's providers (the last known stand when it does not answer). */
const TENANT_LOOKUP_TIMEOUT_MS = 2_000;

/** The ports of the run engine, served by the other services over gRPC. */
export function createServiceClients(addressOf: (name: ServiceName) => string, catalogCaller: { tenantId: string; actor: string }) {
  const registryChannel = createChannel(addressOf('AgentRegistry'));
  const sessionChannel = createChannel(addressOf('Session'));
  const attachmentChannel = createChannel(addressOf('Attachment'));
  const governanceChannel = createChannel(addressOf('Governance'));
  const registry = createServiceClient(AgentRegistryServiceDefinition, registryChannel);
  const toolServerClient = createServiceClient(ToolServerServiceDefinition, registryChannel);
  const sessionClient = createServiceClient(SessionServiceDefinition, sessionChannel);
  const attachmentClient = createServiceClient(AttachmentServiceDefinition, attachmentChannel);
  const governance = createServiceClient(GovernanceServiceDefinition, governanceChannel);
  const skillChannel = createChannel(addressOf('Skill'));
  const skillClient = createServiceClient(SkillServiceDefinition, skillChannel);
  const knowledgeChannel = createChannel(addressOf('Knowledge'));
  const knowledgeClient = createServiceClient(KnowledgeServiceDefinition, knowledgeChannel);

  const agents: AgentLoader = {
    async load(caller, name, version) {
      const record = recordFromProto((await registry.resolveAgent({ name, version }, { caller })).agent);
      return { definition: record.definition, version: record.version ?? null };
    },
    async estimate(caller, name, messages, parameters) {
      const estimate = await registry.estimateRun({ name, messages, parameters: Object.fromEntries(parameters) }, { caller });
      return {
        ...estimate,
        contextWindowTokens: estimate.contextWindowTokens ?? null,
        allowedPromptTokens: estimate.allowedPromptTokens ?? null,
      };
    },
  };

  const attachments: AttachmentReader = {
    async read(caller, id) {
      const chunks: Uint8Array[] = [];
      let descriptor: { fileName: string; mediaType: string } | undefined;
      for await (const message of attachmentClient.downloadAttachment({ id }, { caller })) {
        if (message.part?.$case === 'descriptor') descriptor = message.part.value;
        if (message.part?.$case === 'chunk') chunks.push(message.part.value);
      }
      if (!descriptor) throw new HangarError('unavailable', `attachment ${id} came without its descriptor`, {}, 'service_unavailable');
      return { id, fileName: descriptor.fileName, mediaType: descriptor.mediaType, bytes: Buffer.concat(chunks) };
    },
  };

  const attachmentWriter: AttachmentWriter = {
    async store(caller, file, signal) {
      async function* parts() {
        yield { part: { $case: 'header' as const, value: { fileName: file.fileName, sessionId: file.sessionId } } };
        // In pieces, as the gateway uploads: one gRPC message holds at most 4 MiB.
        for (let offset = 0; offset < file.bytes.length; offset += UPLOAD_PIECE_BYTES)
          yield { part: { $case: 'chunk' as const, value: file.bytes.subarray(offset, offset + UPLOAD_PIECE_BYTES) } };
      }
      const { attachment } = await attachmentClient.uploadAttachment(parts(), { caller, signal });
      if (!attachment) throw new HangarError('unavailable', 'the attachment service stored no attachment', {}, 'service_unavailable');
      return {
        id: attachment.id,
        fileName: attachment.fileName,
        mediaType: attachment.mediaType,
        size: Number(attachment.size),
        sha256: attachment.sha256,
        sessionId: attachment.sessionId ?? null,
        createdAt: attachment.createdAt!,
      };
    },
    async remove(caller, id) {
      await attachmentClient.deleteAttachment({ id }, { caller });
    },
  };

  const sessions: SessionGateway = {
    async open(caller, sessionId, agentName) {
      return (await sessionClient.openSession({ sessionId, agentName }, { caller })).messages;
    },
    async history(caller, sessionId) {
      try {
        return (await sessionClient.getSession({ sessionId }, { caller })).messages;
      } catch (error) {
        if ((error as HangarError).status === 404) return []; // a new session has no history yet
        throw error;
      }
    },
    async append(caller, sessionId, messages) {
      await sessionClient.appendMessages({ sessionId, messages }, { caller });
    },
  };

  const skills: SkillGateway = {
    forRun: async (caller, names) => (names.length ? (await skillClient.skillsForRun({ names }, { caller })).skills : []),
    readResource: async (caller, skillName, name) => (await skillClient.readSkillResource({ skillName, name }, { caller })).content,
    async runScript(caller, skillName, scriptName, input, signal) {
      const result = await skillClient.runSkillScript(
        { skillName, scriptName, args: input.args ?? [], stdin: input.stdin },
        { caller, signal },
      );
      return { ...result, exitCode: result.exitCode ?? null, signal: result.signal ?? null };
    },
  };

  const audit: AuditWriter = async (caller, entry) => void (await governance.recordAudit(entry, { caller }));
  const admitRun: GovernanceAdmission = async (caller, agentName) => {
    const decision = await governance.admitRun({ agentName }, { caller });
    return { exceeded: decision.admitted ? undefined : decision.exceeded!, governed: decision.governed };
  };
  const spendQuota: SpendQuotaGateway = {
    async admit(caller) {
      const decision = await governance.admitSpend({}, { caller });
      return decision.admitted ? undefined : decision.exceeded!;
    },
    async count(caller, { id, cost, at }) {
      await governance.countSpend({ id, cost, at: at.toISOString() }, { caller });
    },
  };
  const tenantSettings: TenantSettingsSource = async (caller) => {
    const { tenant } = await governance.getTenant(
      { id: caller.tenantId },
      { caller, signal: AbortSignal.timeout(TENANT_LOOKUP_TIMEOUT_MS) },
    );
    return {
      enabled: tenant!.enabled,
      providers: Object.fromEntries(
        Object.entries(tenant!.providers).map(([name, provider]) => [
          name,
          { kind: provider.kind, endpoint: provider.endpoint ?? null, apiKeyKey: provider.apiKeyKey },
        ]),
      ),
    };
  };

  const toolServers: ToolServerLookup = async (caller, name) => {
    const server = await toolServerClient
      .getToolServer({ name }, { caller })
      .then((response) => response.toolServer!)
      .catch((error: unknown) => {
        if (error instanceof HangarError && error.kind === 'notFound') return undefined;
        throw error;
      });
    if (!server?.enabled) return undefined;
    return {
      name: server.name,
      url: server.url,
      transport: toolServerTransportFromProto(server.transport) ?? 'streamable-http',
      headers: server.headers,
      secretKey: server.secretKey ?? null,
      tools: server.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema ?? {} })),
      resources: server.resources.map((resource) => ({ ...resource, mimeType: resource.mimeType ?? null })),
    };
  };

  const knowledge: KnowledgeGateway = {
    async describe(caller, name) {
      try {
        const { collection } = await knowledgeClient.getCollection(
          { name },
          { caller, signal: AbortSignal.timeout(KNOWLEDGE_LOOKUP_TIMEOUT_MS) },
        );
        return { name: collection!.name, description: collection!.description };
      } catch (error) {
        if (error instanceof HangarError && error.kind === 'notFound') return undefined;
        // The service did not answer in time or failed: the tool is still offered, and a search that fails fails that call, not the run.
        return { name, description: '' };
      }
    },
    search: async (caller, collection, query, topK, signal) =>
      (await knowledgeClient.search({ collection, query, topK }, { caller, signal })).results,
  };

  let catalog: { at: number; tools: ReturnType<ToolCatalog> } | undefined;
  const toolCatalog: ToolCatalog = () => {
    if (!catalog || Date.now() - catalog.at > TOOL_CATALOG_TTL_MS) {
      const tools = registry
        .listTools({}, { caller: catalogCaller })
        .then(
          (response) =>
            new Map(response.tools.map((entry) => [entry.name, { description: entry.description, inputSchema: entry.inputSchema ?? {} }])),
        );
      catalog = { at: Date.now(), tools };
      tools.catch(() => (catalog = undefined));
    }
    return catalog.tools;
  };

  return {
    agents,
    attachments,
    attachmentWriter,
    sessions,
    skills,
    audit,
    admitRun,
    spendQuota,
    tenantSettings,
    toolCatalog,
    toolServers,
    knowledge,
    close() {
      registryChannel.close();
      sessionChannel.close();
      attachmentChannel.close();
      governanceChannel.close();
      skillChannel.close();
      knowledgeChannel.close();
    },
  };
}

import {
  checkServiceEndpoint,
  conflict,
  notFound,
  validationError,
  type Caller,
  type FieldError,
  type Logger,
  RECORD_NAME,
} from '@hangar/platform';
import { discoverTools, type McpDiscoverySettings } from './mcp-discovery.js';
import { MCP_REFERENCE_PREFIX, parseMcpReference, TOOL_SERVER_TRANSPORTS } from '@hangar/contracts';
import type { CatalogTool } from '../catalog.js';
import type { ToolServer, ToolServerInput, ToolServerTransport } from './tool-server.model.js';
import type { ToolServerRepository } from './tool-server.repository.js';

/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$/;
const HEADER_VALUE = /^[\t\x20-\x7e]{0,4096}$/;
/** Set by the MCP transport itself. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
]);
/**
 * Header names that carry credentials: stored headers are shown to every reader of the server, so a
 * credential goes through `secretKey` (sent as a bearer token) instead.
 */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|key|token|secret|passw|auth/i;
const MAX_HEADERS = 20;
/** Servers refreshed per round of the background refresh. */
const REFRESH_BATCH = 20;

/** What a fresh lookup says of one `mcp:<server>/<tool>` reference of an agent. */
export type McpReferenceCheck =
  | { state: 'found' }
  | { state: 'missing'; reason: string }
  /** The server could not be asked now, but listed the tool at its last discovery. */
  | { state: 'unverified'; reason: string };

export interface ToolServerRequest {
  url: string;
  transport: string;
  headers: Record<string, string>;
  secretKey?: string;
  enabled: boolean;
}

export interface ToolServerServiceDeps {
  repository: ToolServerRepository;
  discovery: McpDiscoverySettings;
  /** `Egress:AllowPrivateNetworkTargets`, judged at save for an IP literal (the guarded fetch judges every connection). */
  allowPrivateNetworkTargets: boolean;
  /** `Mcp:McpSecretsPrefix`. */
  secretsPrefix: string;
  /** `Validation:McpTimeout`: the fresh lookup that validates an agent's `mcp:` tools. */
  validationTimeoutMs: number;
  /** `Mcp:Enabled`: false keeps the records but connects to no server and offers no tool. */
  enabled: boolean;
  logger: Logger;
}

/** A tenant's MCP tool servers (API.md "Tool servers (MCP) and exposure") and the tools discovered on them. */
export function createToolServerService(deps: ToolServerServiceDeps) {
  const { repository } = deps;
  /** How long a discovery holds its server: twice its timeout, after which an instance that died mid-discovery lets go. */
  const claimMs = deps.discovery.timeoutMs * 2;

  async function existing(caller: Caller, name: string): Promise<ToolServer> {
    const server = RECORD_NAME.test(name) ? await repository.get(caller.tenantId, name) : undefined;
    if (!server) throw notFound(`tool server "${name}" not found`);
    return server;
  }

  /** The request as it may be stored, refused with every reason at once. */
  function checked(name: string, request: ToolServerRequest): ToolServerInput {
    const errors: FieldError[] = [];
    if (!RECORD_NAME.test(name))
      errors.push({ path: 'name', message: 'must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
    const target = checkServiceEndpoint(request.url, { allowPrivateNetworkTargets: deps.allowPrivateNetworkTargets });
    if (!target.ok) errors.push({ path: 'url', message: target.reason });
    if (!(TOOL_SERVER_TRANSPORTS as readonly string[]).includes(request.transport))
      errors.push({ path: 'transport', message: `must be one of ${TOOL_SERVER_TRANSPORTS.join(', ')}` });
    const headers = Object.entries(request.headers);
    if (headers.length > MAX_HEADERS) errors.push({ path: 'headers', message: `at most ${MAX_HEADERS} headers` });
    const seen = new Set<string>();
    for (const [header, value] of headers) {
      const lower = header.toLowerCase();
      if (!HEADER_NAME.test(header)) errors.push({ path: `headers.${header}`, message: 'is not a valid header name' });
      else if (TRANSPORT_HEADERS.has(lower)) errors.push({ path: `headers.${header}`, message: 'is set by the MCP transport' });
      else if (CREDENTIAL_HEADER.test(lower))
        errors.push({
          path: `headers.${header}`,
          message: 'looks like a credential: stored headers are shown to readers, so name it in secretKey',
        });
      else if (seen.has(lower)) errors.push({ path: `headers.${header}`, message: 'is given twice (header names ignore case)' });
      seen.add(lower);
      if (!HEADER_VALUE.test(value)) errors.push({ path: `headers.${header}`, message: 'must be at most 4096 printable ASCII characters' });
    }
    if (request.secretKey !== undefined && (!request.secretKey.startsWith(deps.secretsPrefix) || request.secretKey === deps.secretsPrefix))
      errors.push({ path: 'secretKey', message: `must name a configuration key under ${deps.secretsPrefix} (Mcp:McpSecretsPrefix)` });
    if (errors.length) throw validationError('the tool server is not valid', errors);
    return {
      url: request.url,
      transport: request.transport as ToolServerTransport,
      headers: Object.fromEntries(headers.map(([header, value]) => [header.toLowerCase(), value])),
      secretKey: request.secretKey ?? null,
      enabled: request.enabled,
    };
  }

  /** Discovers a server's tools and records them; a server saved again meanwhile keeps its newer state. */
  async function discover(server: ToolServer): Promise<ToolServer> {
    const discovery = await discoverTools(server, deps.discovery);
    if (!discovery.ok)
      deps.logger.warn({ tenant: server.tenantId, toolServer: server.name, reason: discovery.error }, 'tool server discovery failed');
    return (
      (await repository.recordDiscovery(server.tenantId, server.name, server.generation, discovery)) ??
      (await repository.get(server.tenantId, server.name)) ??
      server
    );
  }

  return {
    /** Saves a server and, when enabled, discovers its tools before answering (a server that is down is saved as Failed). */
    async put(caller: Caller, name: string, request: ToolServerRequest): Promise<{ toolServer: ToolServer; created: boolean }> {
      const input = checked(name, request);
      const discovering = input.enabled && deps.enabled;
      // Held from the background refresh meanwhile: one discovery per save, not two racing.
      const { toolServer, created } = await repository.put(caller.tenantId, name, input, discovering ? claimMs : null);
      return { toolServer: discovering ? await discover(toolServer) : toolServer, created };
    },
    get: existing,
    /** The tenant's discovered MCP tools as catalog entries (`mcp:<server>/<tool>`), from enabled servers. */
    async catalogTools(caller: Caller): Promise<CatalogTool[]> {
      if (!deps.enabled) return [];
      return (await repository.list(caller.tenantId))
        .filter((server) => server.enabled)
        .flatMap((server) =>
          server.tools.map((tool) => ({
            name: `${MCP_REFERENCE_PREFIX}${server.name}/${tool.name}`,
            description: tool.description,
            inputSchema: tool.inputSchema,
            source: 'mcp' as const,
          })),
        );
    },
    list: (caller: Caller) => repository.list(caller.tenantId),
    async delete(caller: Caller, name: string): Promise<void> {
      if (!RECORD_NAME.test(name) || !(await repository.delete(caller.tenantId, name))) throw notFound(`tool server "${name}" not found`);
    },
    /** Discovers again now; a disabled server is not connected and answers as it is. */
    async refresh(caller: Caller, name: string): Promise<ToolServer> {
      const server = await existing(caller, name);
      if (!deps.enabled) throw conflict('Mcp:Enabled is false: no tool server is connected');
      return server.enabled ? discover(server) : server;
    },
    /**
     * Checks an agent's `mcp:` tool references against what their servers list now (one discovery
     * per server within Validation:McpTimeout; a successful one is recorded). A server that cannot
     * be asked leaves its tools unverified when its last discovery listed them.
     */
    async checkReferences(caller: Caller, references: string[]): Promise<Map<string, McpReferenceCheck>> {
      const checks = new Map<string, McpReferenceCheck>();
      if (!deps.enabled) {
        for (const reference of references)
          checks.set(reference, { state: 'missing', reason: 'MCP tool servers are switched off (Mcp:Enabled)' });
        return checks;
      }
      const byServer = new Map<string, Array<{ reference: string; tool: string }>>();
      for (const reference of references) {
        const parsed = parseMcpReference(reference);
        if (!parsed || !RECORD_NAME.test(parsed.server))
          checks.set(reference, { state: 'missing', reason: 'is not of the form mcp:<server>/<tool>' });
        else byServer.set(parsed.server, [...(byServer.get(parsed.server) ?? []), { reference, tool: parsed.tool }]);
      }
      const limit = { ms: deps.validationTimeoutMs, setting: 'Validation:McpTimeout' };
      await Promise.all(
        [...byServer].map(async ([name, wanted]) => {
          const server = await repository.get(caller.tenantId, name);
          const judge = (check: (tool: string) => McpReferenceCheck) =>
            wanted.forEach(({ reference, tool }) => checks.set(reference, check(tool)));
          if (!server) return judge(() => ({ state: 'missing', reason: `tool server "${name}" is not registered` }));
          if (!server.enabled) return judge(() => ({ state: 'missing', reason: `tool server "${name}" is disabled` }));
          const discovery = await discoverTools(server, deps.discovery, limit);
          if (discovery.ok) {
            await repository.recordDiscovery(server.tenantId, server.name, server.generation, discovery);
            const listed = new Set(discovery.tools.map((tool) => tool.name));
            return judge((tool) =>
              listed.has(tool) ? { state: 'found' } : { state: 'missing', reason: `tool server "${name}" does not list "${tool}"` },
            );
          }
          const known = new Set(server.tools.map((tool) => tool.name));
          judge((tool) =>
            known.has(tool)
              ? {
                  state: 'unverified',
                  reason: `tool server "${name}" could not be asked now (${discovery.error}); it listed "${tool}" at its last discovery`,
                }
              : { state: 'missing', reason: `tool server "${name}" could not be asked (${discovery.error}) and has not listed "${tool}"` },
          );
        }),
      );
      return checks;
    },
    /**
     * One round of the background refresh (`Mcp:RefreshInterval`): servers of every tenant whose
     * tools are older than the interval, claimed so that instances side by side take different ones.
     */
    async refreshDue(intervalMs: number): Promise<number> {
      const due = await repository.claimDue(intervalMs, claimMs, REFRESH_BATCH);
      await Promise.all(due.map(discover));
      return due.length;
    },
  };
}

export type ToolServerService = ReturnType<typeof createToolServerService>;

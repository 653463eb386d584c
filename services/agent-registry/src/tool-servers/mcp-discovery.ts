import { connectMcp, describeMcpError, McpSecretMissingError, type McpConnectSettings } from '@hangar/platform';
import type { Discovery, DiscoveredResource, DiscoveredTool, ToolServerInput } from './tool-server.model.js';

export interface McpDiscoverySettings extends McpConnectSettings {
  /** `Mcp:ConnectionTimeout`: connecting and listing, together. */
  timeoutMs: number;
  /** `Mcp:MaxToolsPerServer`: a server listing more is refused, not cut silently. */
  maxTools: number;
}

/** What one tool's description and schema may take, and all of a server's (they travel in every run's lookup). */
const MAX_TOOL_BYTES = 64 * 1024;
const MAX_TOOLS_BYTES = 1024 * 1024;
/** Resources offered of one server, at most: their descriptions travel in every run's lookup too. */
const MAX_RESOURCES = 200;
const MAX_RESOURCES_BYTES = 256 * 1024;

/** The limit of one discovery, and the configuration key that sets it (named when it is reached). */
export interface DiscoveryLimit {
  ms: number;
  setting: string;
}

/**
 * Connects to an MCP server and lists its tools and, when it offers them, its resources (every
 * page of each), within `limit` (default Mcp:ConnectionTimeout).
 */
export async function discoverTools(
  server: ToolServerInput,
  settings: McpDiscoverySettings,
  limit: DiscoveryLimit = { ms: settings.timeoutMs, setting: 'Mcp:ConnectionTimeout' },
): Promise<Discovery> {
  const deadline = AbortSignal.timeout(limit.ms);
  const options = { signal: deadline, timeout: limit.ms };
  let client: Awaited<ReturnType<typeof connectMcp>> | undefined;
  try {
    client = await connectMcp(server, settings, options);
    const tools: DiscoveredTool[] = [];
    let cursor: string | undefined;
    let bytes = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
      for (const tool of page.tools) {
        const listed = { name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as Record<string, unknown> };
        const size = Buffer.byteLength(JSON.stringify(listed));
        if (size > MAX_TOOL_BYTES)
          return { ok: false, error: `the tool ${tool.name} is described in ${size} bytes (at most ${MAX_TOOL_BYTES})` };
        if ((bytes += size) > MAX_TOOLS_BYTES)
          return { ok: false, error: `the server's tools are described in more than ${MAX_TOOLS_BYTES} bytes` };
        tools.push(listed);
      }
      if (tools.length > settings.maxTools)
        return { ok: false, error: `the server lists more than ${settings.maxTools} tools (Mcp:MaxToolsPerServer)` };
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const resources = client.getServerCapabilities()?.resources ? await listResources(client, options) : [];
    return { ok: true, tools, resources };
  } catch (error) {
    if (deadline.aborted && !(error instanceof McpSecretMissingError))
      return { ok: false, error: `no answer within ${limit.ms} ms (${limit.setting})` };
    return { ok: false, error: describeMcpError(error) };
  } finally {
    await client?.close().catch(() => {});
  }
}

/**
 * The server's resources, first ones first: at most MAX_RESOURCES described in MAX_RESOURCES_BYTES
 * (the rest are not offered). A server whose resource list fails keeps its tools, with no resource:
 * resources are extra, the tools are what agents were saved with.
 */
async function listResources(
  client: Awaited<ReturnType<typeof connectMcp>>,
  options: { signal: AbortSignal; timeout: number },
): Promise<DiscoveredResource[]> {
  const resources: DiscoveredResource[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  try {
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor }, options);
      for (const resource of page.resources) {
        const listed = {
          uri: resource.uri,
          name: resource.name,
          description: resource.description ?? '',
          mimeType: resource.mimeType ?? null,
        };
        bytes += Buffer.byteLength(JSON.stringify(listed));
        if (resources.length === MAX_RESOURCES || bytes > MAX_RESOURCES_BYTES) return resources;
        resources.push(listed);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (error) {
    // Past the deadline the whole discovery has failed; the caller reports that.
    if (options.signal.aborted) throw error;
    return [];
  }
  return resources;
}

import { connectMcp, describeMcpError, McpSecretMissingError, type McpConnectSettings } from '@hangar/platform';
import type { Discovery, DiscoveredTool, ToolServerInput } from './tool-server.model.js';

export interface McpDiscoverySettings extends McpConnectSettings {
  /** `Mcp:ConnectionTimeout`: connecting and listing, together. */
  timeoutMs: number;
  /** `Mcp:MaxToolsPerServer`: a server listing more is refused, not cut silently. */
  maxTools: number;
}

/** The limit of one discovery, and the configuration key that sets it (named when it is reached). */
export interface DiscoveryLimit {
  ms: number;
  setting: string;
}

/** Connects to an MCP server and lists its tools (every page), within `limit` (default Mcp:ConnectionTimeout). */
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
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
      for (const tool of page.tools)
        tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as Record<string, unknown> });
      if (tools.length > settings.maxTools)
        return { ok: false, error: `the server lists more than ${settings.maxTools} tools (Mcp:MaxToolsPerServer)` };
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { ok: true, tools };
  } catch (error) {
    if (deadline.aborted && !(error instanceof McpSecretMissingError))
      return { ok: false, error: `no answer within ${limit.ms} ms (${limit.setting})` };
    return { ok: false, error: describeMcpError(error) };
  } finally {
    await client?.close().catch(() => {});
  }
}

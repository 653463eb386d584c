import type { ToolServerStatusName, ToolServerTransportName } from '@hangar/contracts';

/** API.md "Tool servers (MCP) and exposure": an MCP server a tenant registered, and what it lists. */
export type ToolServerTransport = ToolServerTransportName;
export type ToolServerStatus = ToolServerStatusName;

export interface DiscoveredTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments, as the server lists it. */
  inputSchema: Record<string, unknown>;
}

/** What a tenant saves. */
export interface ToolServerInput {
  url: string;
  transport: ToolServerTransport;
  headers: Record<string, string>;
  /** A configuration key under `Mcp:McpSecretsPrefix`; its value goes out as a bearer token. */
  secretKey: string | null;
  enabled: boolean;
}

export interface ToolServer extends ToolServerInput {
  tenantId: string;
  name: string;
  status: ToolServerStatus;
  /** From the latest successful discovery (a failed one keeps them). */
  tools: DiscoveredTool[];
  error: string | null;
  refreshedAt: Date | null;
  /** New on every save: a discovery is recorded only for the settings it used. */
  generation: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What one discovery found: the tools, or why there are none. */
export type Discovery = { ok: true; tools: DiscoveredTool[] } | { ok: false; error: string };

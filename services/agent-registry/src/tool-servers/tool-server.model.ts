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

/** A resource the server lists (`resources/list`), which runs may read through its read_resource tool. */
export interface DiscoveredResource {
  uri: string;
  name: string;
  description: string;
  mimeType: string | null;
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
  /** Likewise, the resources it lists (none when it offers no resources). */
  resources: DiscoveredResource[];
  error: string | null;
  refreshedAt: Date | null;
  /** New on every save: a discovery is recorded only for the settings it used. */
  generation: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What one discovery found: the tools and resources, or why there are none. */
export type Discovery = { ok: true; tools: DiscoveredTool[]; resources: DiscoveredResource[] } | { ok: false; error: string };

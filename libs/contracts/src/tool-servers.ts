import { ToolServerStatus, ToolServerTransport } from './generated/hangar/v1/tool_servers.js';

/** Agents name an MCP server's tool as `mcp:<server>/<tool>` (API.md "Tool servers (MCP) and exposure"). */
export const MCP_REFERENCE_PREFIX = 'mcp:';

export function parseMcpReference(reference: string): { server: string; tool: string } | undefined {
  if (!reference.startsWith(MCP_REFERENCE_PREFIX)) return undefined;
  const rest = reference.slice(MCP_REFERENCE_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { server: rest.slice(0, slash), tool: rest.slice(slash + 1) };
}

export const TOOL_SERVER_TRANSPORTS = ['streamable-http', 'sse'] as const;
export type ToolServerTransportName = (typeof TOOL_SERVER_TRANSPORTS)[number];

/** Pending until its first discovery; Disabled while `enabled` is false (never connected). */
export const TOOL_SERVER_STATUSES = ['Pending', 'Ready', 'Failed', 'Disabled'] as const;
export type ToolServerStatusName = (typeof TOOL_SERVER_STATUSES)[number];

const TRANSPORT_TO_PROTO: Record<ToolServerTransportName, ToolServerTransport> = {
  'streamable-http': ToolServerTransport.TOOL_SERVER_TRANSPORT_STREAMABLE_HTTP,
  sse: ToolServerTransport.TOOL_SERVER_TRANSPORT_SSE,
};
const TRANSPORT_FROM_PROTO = new Map(Object.entries(TRANSPORT_TO_PROTO).map(([name, value]) => [value, name as ToolServerTransportName]));
const STATUS_TO_PROTO: Record<ToolServerStatusName, ToolServerStatus> = {
  Pending: ToolServerStatus.TOOL_SERVER_STATUS_PENDING,
  Ready: ToolServerStatus.TOOL_SERVER_STATUS_READY,
  Failed: ToolServerStatus.TOOL_SERVER_STATUS_FAILED,
  Disabled: ToolServerStatus.TOOL_SERVER_STATUS_DISABLED,
};
const STATUS_FROM_PROTO = new Map(Object.entries(STATUS_TO_PROTO).map(([name, value]) => [value, name as ToolServerStatusName]));

export const toolServerTransportToProto = (transport: ToolServerTransportName): ToolServerTransport => TRANSPORT_TO_PROTO[transport];
/** The transport a wire value names; undefined for the unspecified (or an unknown, newer) value. */
export const toolServerTransportFromProto = (transport: ToolServerTransport): ToolServerTransportName | undefined =>
  TRANSPORT_FROM_PROTO.get(transport);
export const toolServerStatusToProto = (status: ToolServerStatusName): ToolServerStatus => STATUS_TO_PROTO[status];
export const toolServerStatusFromProto = (status: ToolServerStatus): ToolServerStatusName | undefined => STATUS_FROM_PROTO.get(status);

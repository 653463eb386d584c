import { toolServerPb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { ToolServer, ToolServerStatus, ToolServerTransport } from './tool-server.model.js';
import type { ToolServerService } from './tool-server.service.js';

const TRANSPORT_TO_PROTO: Record<ToolServerTransport, pb.ToolServerTransport> = {
  'streamable-http': pb.ToolServerTransport.TOOL_SERVER_TRANSPORT_STREAMABLE_HTTP,
  sse: pb.ToolServerTransport.TOOL_SERVER_TRANSPORT_SSE,
};
const TRANSPORT_FROM_PROTO = new Map(Object.entries(TRANSPORT_TO_PROTO).map(([name, value]) => [value, name]));
const STATUS_TO_PROTO: Record<ToolServerStatus, pb.ToolServerStatus> = {
  Pending: pb.ToolServerStatus.TOOL_SERVER_STATUS_PENDING,
  Ready: pb.ToolServerStatus.TOOL_SERVER_STATUS_READY,
  Failed: pb.ToolServerStatus.TOOL_SERVER_STATUS_FAILED,
  Disabled: pb.ToolServerStatus.TOOL_SERVER_STATUS_DISABLED,
};

const toolServerToProto = (server: ToolServer): pb.ToolServer => ({
  name: server.name,
  url: server.url,
  transport: TRANSPORT_TO_PROTO[server.transport],
  headers: server.headers,
  secretKey: server.secretKey ?? undefined,
  enabled: server.enabled,
  status: STATUS_TO_PROTO[server.status],
  tools: server.tools,
  error: server.error ?? undefined,
  refreshedAt: server.refreshedAt?.toISOString(),
  createdAt: server.createdAt.toISOString(),
  updatedAt: server.updatedAt.toISOString(),
});

/** gRPC ↔ tool server rules; translation only (an unknown transport reaches the rules as '', which they refuse). */
export function toolServerGrpc(toolServers: ToolServerService): pb.ToolServerServiceImplementation<CallerContext> {
  return {
    async putToolServer(request, { caller }) {
      const { toolServer, created } = await toolServers.put(caller, request.name, {
        url: request.url,
        transport: TRANSPORT_FROM_PROTO.get(request.transport) ?? '',
        headers: request.headers,
        secretKey: request.secretKey,
        enabled: request.enabled,
      });
      return { toolServer: toolServerToProto(toolServer), created };
    },
    async getToolServer({ name }, { caller }) {
      return { toolServer: toolServerToProto(await toolServers.get(caller, name)) };
    },
    async listToolServers(_request, { caller }) {
      return { toolServers: (await toolServers.list(caller)).map(toolServerToProto) };
    },
    async deleteToolServer({ name }, { caller }) {
      await toolServers.delete(caller, name);
      return {};
    },
    async refreshToolServer({ name }, { caller }) {
      return { toolServer: toolServerToProto(await toolServers.refresh(caller, name)) };
    },
  };
}

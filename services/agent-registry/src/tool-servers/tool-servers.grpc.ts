import {
  toolServerStatusToProto,
  toolServerTransportFromProto,
  toolServerTransportToProto,
  type toolServerPb as pb,
} from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { ToolServer } from './tool-server.model.js';
import type { ToolServerService } from './tool-server.service.js';

const toolServerToProto = (server: ToolServer): pb.ToolServer => ({
  name: server.name,
  url: server.url,
  transport: toolServerTransportToProto(server.transport),
  headers: server.headers,
  secretKey: server.secretKey ?? undefined,
  enabled: server.enabled,
  status: toolServerStatusToProto(server.status),
  tools: server.tools,
  resources: server.resources.map((resource) => ({ ...resource, mimeType: resource.mimeType ?? undefined })),
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
        transport: toolServerTransportFromProto(request.transport) ?? '',
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

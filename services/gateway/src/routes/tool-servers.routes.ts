import {
  TOOL_SERVER_STATUSES,
  TOOL_SERVER_TRANSPORTS,
  toolServerStatusFromProto,
  toolServerTransportFromProto,
  toolServerTransportToProto,
  type toolServerPb as pb,
} from '@hangar/contracts';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Tool servers';

const ToolServerRequestSchema = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe('The MCP endpoint: https:, or http: to a private address while Egress:AllowPrivateNetworkTargets is on'),
    transport: z.enum(TOOL_SERVER_TRANSPORTS),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe('Extra request headers (at most 20; not Authorization, which comes from secretKey)'),
    secretKey: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('A configuration key under Mcp:McpSecretsPrefix whose value is sent as a bearer token'),
    enabled: z.boolean().optional().describe('Default true; a disabled server is kept but never connected'),
  })
  .meta({ id: 'ToolServerRequest' });

const DiscoveredToolSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
    reference: z.string().describe('mcp:<server>/<tool>'),
  })
  .meta({ id: 'DiscoveredTool' });

const DiscoveredResourceSchema = z
  .object({ uri: z.string(), name: z.string(), description: z.string(), mimeType: z.string().nullable() })
  .meta({ id: 'DiscoveredResource' });

const ToolServerSchema = z
  .object({
    name: z.string(),
    url: z.string(),
    transport: z.enum(TOOL_SERVER_TRANSPORTS),
    headers: z.record(z.string(), z.string()),
    secretKey: z.string().nullable(),
    enabled: z.boolean(),
    status: z.enum(TOOL_SERVER_STATUSES).describe('Ready or Failed after a discovery; Failed keeps the tools found before'),
    tools: DiscoveredToolSchema.array(),
    resources: DiscoveredResourceSchema.array().describe('What runs of agents using its tools may read with mcp__<server>__read_resource'),
    error: z.string().nullable().describe('Why the latest discovery failed'),
    refreshedAt: z.iso.datetime().nullable().describe('When the tools were last discovered'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'ToolServer' });

const NameParams = z.object({ name: z.string() });

const toolServerJson = (server: pb.ToolServer) => ({
  name: server.name,
  url: server.url,
  transport: toolServerTransportFromProto(server.transport)!,
  headers: server.headers,
  secretKey: server.secretKey ?? null,
  enabled: server.enabled,
  status: toolServerStatusFromProto(server.status)!,
  tools: server.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema ?? {},
    reference: `mcp:${server.name}/${tool.name}`,
  })),
  resources: server.resources.map((resource) => ({ ...resource, mimeType: resource.mimeType ?? null })),
  error: server.error ?? null,
  refreshedAt: server.refreshedAt ?? null,
  createdAt: server.createdAt!,
  updatedAt: server.updatedAt!,
});

/** API.md "Tool servers (MCP) and exposure": a tenant's MCP servers, kept by the agent registry. */
export const toolServerRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/tool-servers',
    operationId: 'listToolServers',
    summary: 'List tool servers',
    description: 'Returns the tenant’s MCP tool servers by name, each with its status and the tools last discovered on it.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    responses: { 200: { description: 'Tool servers', schema: ToolServerSchema.array() } },
    async handler({ caller }, { toolServers }) {
      return { status: 200, body: (await toolServers.listToolServers({}, { caller })).toolServers.map(toolServerJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/tool-servers/{name}',
    operationId: 'getToolServer',
    summary: 'Get a tool server',
    description:
      'Returns one tool server with its discovered tools (each with the mcp:<server>/<tool> reference agents name) and status. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    params: NameParams,
    responses: { 200: { description: 'The tool server', schema: ToolServerSchema }, 404: problemResponse('No such tool server') },
    async handler({ params, caller }, { toolServers }) {
      return { status: 200, body: toolServerJson((await toolServers.getToolServer({ name: params.name }, { caller })).toolServer!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/tool-servers/{name}',
    operationId: 'putToolServer',
    summary: 'Register or replace a tool server',
    description:
      'Stores an MCP server and, when enabled, connects to it and lists its tools before answering (within Mcp:ConnectionTimeout). A server that cannot be reached is still stored, with status Failed and the reason in error. A bad name, URL, transport or header, a private target while Egress:AllowPrivateNetworkTargets is off, or a secretKey outside Mcp:McpSecretsPrefix is 400 and stores nothing. Answers 201 when it created the server, 200 when it replaced one (its tools are discovered again).',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: NameParams,
    body: ToolServerRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: ToolServerSchema },
      201: { description: 'Created', schema: ToolServerSchema },
      400: problemResponse('Invalid name, URL, transport, headers or secretKey'),
    },
    async handler({ params, body, caller }, { toolServers }) {
      const { toolServer, created } = await toolServers.putToolServer(
        {
          name: params.name,
          url: body.url,
          transport: toolServerTransportToProto(body.transport),
          headers: body.headers ?? {},
          secretKey: body.secretKey,
          enabled: body.enabled ?? true,
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: toolServerJson(toolServer!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/tool-servers/{name}',
    operationId: 'deleteToolServer',
    summary: 'Delete a tool server',
    description: 'Forgets a tool server and its discovered tools. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No such tool server') },
    async handler({ params, caller }, { toolServers }) {
      await toolServers.deleteToolServer({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/tool-servers/{name}/refresh',
    operationId: 'refreshToolServer',
    summary: 'Discover a tool server’s tools again',
    description:
      'Connects now and replaces the discovered tools with what the server lists (status Ready), or records why it could not (status Failed, earlier tools kept). A disabled server is not connected and answers as it is. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: NameParams,
    responses: {
      200: { description: 'The tool server after discovery', schema: ToolServerSchema },
      404: problemResponse('No such tool server'),
    },
    async handler({ params, caller }, { toolServers }) {
      return { status: 200, body: toolServerJson((await toolServers.refreshToolServer({ name: params.name }, { caller })).toolServer!) };
    },
  }),
];

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { classifyError, HANGAR_VERSION, HangarError, validationError, type Caller } from '@hangar/platform';
import type { Request } from 'express';
import { z } from 'zod';
import type { GatewayContext } from '../../gateway.context.js';
import { runResponseBody } from '../../http/run-stream.js';
import { defineRoute } from '../../http/route.js';
import { problemResponse } from '../../api.schemas.js';
import { authorizeStart, startCompatibilityRun } from '../openai/openai-runs.js';
import { exposedAgents } from './exposed-agents.js';

const TAG = 'Exposure';

/** Runs the agent for the caller like a `/v1` call (a recorded run of kind Compatibility) and answers as an MCP tool result. */
async function runAsTool(context: GatewayContext, caller: Caller, agentName: string, message: string, signal: AbortSignal) {
  try {
    await authorizeStart(context, caller, agentName);
    const started = await startCompatibilityRun(
      { agentName, messages: [{ role: 'user', content: message }], isStreaming: false, clientMetadata: { surface: 'mcp' } },
      caller,
      signal,
      context,
    );
    const answer = await runResponseBody(started.updates);
    if (answer.status === 'Canceled')
      return { isError: true, content: [{ type: 'text' as const, text: `the run ${answer.runId} was canceled` }] };
    return {
      content: [{ type: 'text' as const, text: answer.output.text }],
      structuredContent: { runId: answer.runId, text: answer.output.text },
    };
  } catch (error) {
    // A refusal or a failed run is the tool's error, which the calling model reads; not a protocol error.
    const problem = classifyError(error);
    if (!problem) context.logger.error({ err: error, agent: agentName }, 'an exposed agent could not be run as an MCP tool');
    return { isError: true, content: [{ type: 'text' as const, text: problem?.message ?? 'the agent could not be run' }] };
  }
}

const onceAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

/**
 * What the SDK would refuse with a JSON-RPC body, refused here as problem+json like every other bad
 * request: an Accept without both types the transport requires, a body that is no JSON-RPC
 * message (or batch of them), a protocol version it does not speak.
 */
function checkMcpRequest(request: Request, body: unknown) {
  const accept = request.get('accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    throw new HangarError('notAcceptable', 'an MCP client accepts both application/json and text/event-stream');
  const messages = Array.isArray(body) ? body : [body];
  if (!messages.length || !messages.every((message) => JSONRPCMessageSchema.safeParse(message).success))
    throw validationError('the body is not a JSON-RPC 2.0 message of the Model Context Protocol', [
      { path: 'body', message: 'is not a JSON-RPC message' },
    ]);
  const version = request.get('mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    throw validationError(`MCP protocol version ${version} is not supported`, [
      { path: 'MCP-Protocol-Version', message: `must be one of ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}` },
    ]);
}

/**
 * API.md "Tool servers (MCP) and exposure": the agents named in `Hangar:Exposure:Mcp:Agents` as
 * tools of an MCP server (streamable HTTP, stateless: one server per request, JSON answers).
 */
export const mcpExposureRoutes = [
  defineRoute({
    method: 'post',
    path: '/mcp',
    operationId: 'exposedMcp',
    summary: 'MCP server of the exposed agents',
    description:
      'An MCP endpoint (streamable HTTP transport, stateless, JSON responses) whose tools are the agents listed in Hangar:Exposure:Mcp:Agents that exist for the caller; none by default. Each tool takes { message } and runs its agent for the caller as a recorded run of kind Compatibility, answering its text (structuredContent { runId, text }); a refused or failed run is a tool error. The body is a JSON-RPC message of the Model Context Protocol.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'ExternalInvoke' },
    rawBody: true,
    documentedBody: { contentType: 'application/json', schema: { type: 'object', description: 'A JSON-RPC 2.0 message (MCP)' } },
    responses: {
      200: { description: 'The JSON-RPC answer', schema: z.record(z.string(), z.unknown()) },
      202: { description: 'A notification or response was taken' },
      406: problemResponse('The Accept header lacks application/json or text/event-stream'),
    },
    async handler({ caller, body, request, response, signal }, context) {
      checkMcpRequest(request, body);
      const server = new McpServer({ name: 'hangar', version: HANGAR_VERSION });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // Before any await: a caller gone meanwhile still closes both (its runs end Canceled through `signal`).
      response.on(
        'close',
        () =>
          void transport
            .close()
            .then(() => server.close())
            .catch((error: unknown) => context.logger.warn({ err: error }, 'the MCP exposure server did not close cleanly')),
      );
      const agents = await exposedAgents(context, caller, context.config.Hangar.Exposure.Mcp.Agents);
      // The SDK answers tools/list only once a tool is registered: with none, the list is empty, not an unknown method.
      if (!agents.length) {
        server.server.registerCapabilities({ tools: {} });
        server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
        server.server.setRequestHandler(CallToolRequestSchema, (call) => {
          throw new McpError(ErrorCode.InvalidParams, `Tool ${call.params.name} not found`);
        });
      }
      for (const agent of agents) {
        server.registerTool(
          agent.name,
          {
            description: agent.description ?? `Runs the agent ${agent.name} and answers its reply`,
            inputSchema: { message: z.string().min(1) },
          },
          ({ message }) => runAsTool(context, caller, agent.name, message, signal),
        );
      }
      await server.connect(transport);
      // A closed transport drops an answer it still owed without settling this: the caller's departure ends the wait.
      await Promise.race([transport.handleRequest(request, response, body), onceAborted(signal)]);
      return { status: response.statusCode, sent: true };
    },
  }),
];

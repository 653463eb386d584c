import { classifyError, HANGAR_VERSION, HangarError, notFound, validationError, type Caller } from '@hangar/platform';
import { z } from 'zod';
import type { GatewayContext } from '../../gateway.context.js';
import { runResponseBody } from '../../http/run-stream.js';
import { defineRoute } from '../../http/route.js';
import { openEventStream } from '../../http/sse.js';
import { problemResponse } from '../../api.schemas.js';
import { authorizeStart, startCompatibilityRun, type StartedRun } from '../openai/openai-runs.js';
import { answerOfRun, readableRun } from '../openai/response-sessions.js';
import { exposedAgents } from './exposed-agents.js';
import {
  agentCard,
  answerArtifact,
  JsonRpcRequestSchema,
  MessageSendParamsSchema,
  rpcError,
  rpcResult,
  RpcError,
  task,
  TaskIdParamsSchema,
  taskStateOf,
  textOf,
  type JsonRpcRequest,
  type MessageSendParams,
  type TaskState,
} from './a2a-protocol.js';

const TAG = 'Exposure';
const AgentParams = z.object({ agent: z.string() });

/** The agent of the path when `Hangar:Exposure:A2A:Agents` lists it and it exists for the caller; 404 otherwise. */
async function exposedAgent(context: GatewayContext, caller: Caller, name: string) {
  const listed = context.config.Hangar.Exposure.A2A.Agents.includes(name) ? [name] : [];
  const [agent] = await exposedAgents(context, caller, listed);
  if (!agent) throw notFound(`agent "${name}" is not served over A2A`);
  return agent;
}

/** A refusal before the run exists (quota, run authorization) as the JSON-RPC error the caller reads. */
function refusal(request: JsonRpcRequest, error: unknown) {
  const problem = classifyError(error);
  if (!problem) throw error;
  return rpcError(request.id, RpcError.internal, problem.message, { status: problem.status, errorType: problem.errorType });
}

/** One `message/send` or `message/stream` call: who asks which agent what. */
interface MessageCall {
  context: GatewayContext;
  caller: Caller;
  agentName: string;
  request: JsonRpcRequest;
  params: MessageSendParams;
  signal: AbortSignal;
}

/** Starts the task's run; a refusal before it exists comes back as the JSON-RPC error to answer. */
async function startTask(call: MessageCall, isStreaming: boolean) {
  const { context, caller, agentName, params, request, signal } = call;
  let started: StartedRun;
  try {
    await authorizeStart(context, caller, agentName);
    started = await startCompatibilityRun(
      {
        agentName,
        messages: [{ role: 'user', content: textOf(params) }],
        isStreaming,
        clientMetadata: {
          surface: 'a2a',
          messageId: params.message.messageId,
          ...(params.message.contextId && { contextId: params.message.contextId }),
        },
      },
      caller,
      signal,
      context,
    );
  } catch (error) {
    return { refused: refusal(request, error) };
  }
  return { started, taskId: started.run.id, contextId: params.message.contextId ?? started.run.id };
}

/** `message/send`: runs the agent to its end and answers the task, completed with its answer or failed with why. */
async function sendMessage(call: MessageCall) {
  const begun = await startTask(call, false);
  if ('refused' in begun) return begun.refused;
  const { started, taskId, contextId } = begun;
  try {
    const answer = await runResponseBody(started.updates);
    // A run canceled meanwhile (tasks/cancel, a drain) ends `finished` too, with what it had said so far.
    const state = answer.status === 'Canceled' ? 'canceled' : 'completed';
    return rpcResult(call.request.id, task(taskId, contextId, state, { answer: answer.output.text }));
  } catch (error) {
    return rpcResult(call.request.id, task(taskId, contextId, 'failed', { reason: classifyError(error)?.message ?? 'the run failed' }));
  }
}

/** `message/stream`: the task, then its answer as appended artifact chunks, then its final status, each a JSON-RPC result frame. */
async function streamMessage(call: MessageCall, response: Parameters<typeof openEventStream>[0]) {
  const begun = await startTask(call, true);
  if ('refused' in begun) {
    // A streaming client reads only SSE: the refusal is the stream's one frame.
    const stream = openEventStream(response);
    stream.data(begun.refused);
    stream.end();
    return { status: 200, sent: true };
  }
  const { started, taskId, contextId } = begun;
  const { request, signal } = call;
  const stream = openEventStream(response, { 'X-Hangar-Run-Id': taskId });
  const frame = (result: unknown) => stream.data(rpcResult(request.id, result));
  const finalStatus = (state: TaskState, reason?: string) =>
    frame({ kind: 'status-update', taskId, contextId, status: task(taskId, contextId, state, { reason }).status, final: true });
  frame(task(taskId, contextId, 'working'));
  let chunks = 0;
  try {
    for (let next = await started.updates.next(); !next.done; next = await started.updates.next()) {
      const update = next.value.update;
      if (update?.$case === 'textDelta')
        frame({
          kind: 'artifact-update',
          taskId,
          contextId,
          artifact: answerArtifact(taskId, update.value.text),
          append: chunks++ > 0,
          lastChunk: false,
        });
      else if (update?.$case === 'finished') {
        frame({ kind: 'artifact-update', taskId, contextId, artifact: answerArtifact(taskId, ''), append: chunks > 0, lastChunk: true });
        finalStatus(update.value.run ? taskStateOf(update.value.run) : 'completed');
        break;
      } else if (update?.$case === 'failed') {
        finalStatus('failed', update.value.message);
        break;
      }
    }
  } catch (error) {
    if (!signal.aborted) finalStatus('failed', classifyError(error)?.message ?? 'the run stream broke off');
  }
  stream.end();
  return { status: 200, sent: true };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `tasks/get` and `tasks/cancel` act on this agent's tasks only: another agent's run, a native or a child run is no task here. */
async function taskOf(context: GatewayContext, caller: Caller, agentName: string, request: JsonRpcRequest) {
  const params = TaskIdParamsSchema.safeParse(request.params);
  if (!params.success) return { error: rpcError(request.id, RpcError.invalidParams, 'params must be { id }') };
  // Only what an A2A message of this agent made: its root Compatibility runs the caller may read.
  const run = UUID.test(params.data.id) ? await readableRun(context, caller, params.data.id) : undefined;
  if (!run || run.agentName !== agentName || run.kind !== 'Compatibility' || run.parentRunId)
    return { error: rpcError(request.id, RpcError.taskNotFound, `task ${params.data.id} not found`) };
  return { run };
}

/**
 * API.md "Tool servers (MCP) and exposure": the agents named in `Hangar:Exposure:A2A:Agents`, each
 * an A2A agent at `{prefix}/a2a/{agent}` (JSON-RPC) with its agent card.
 */
export const a2aExposureRoutes = [
  defineRoute({
    method: 'get',
    path: '/a2a/{agent}/.well-known/agent-card.json',
    operationId: 'getA2AAgentCard',
    summary: 'A2A agent card of an exposed agent',
    description:
      'The A2A agent card (protocol 0.3.0, JSON-RPC transport, streaming, bearer authentication) of an agent listed in Hangar:Exposure:A2A:Agents that exists for the caller; 404 otherwise.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'ExternalInvoke' },
    params: AgentParams,
    responses: {
      200: { description: 'The agent card', schema: z.record(z.string(), z.unknown()) },
      404: problemResponse('Not an exposed agent'),
    },
    async handler({ params, caller, request }, context) {
      const agent = await exposedAgent(context, caller, params.agent);
      // Behind a proxy the request's own scheme and host are not what callers use: BaseUrl says what is.
      const base = context.config.Hangar.Exposure.A2A.BaseUrl ?? `${request.protocol}://${request.get('host')}`;
      const url = `${base}${context.config.Hangar.Api.Prefix}/a2a/${encodeURIComponent(agent.name)}`;
      return { status: 200, body: agentCard({ name: agent.name, description: agent.description }, url, HANGAR_VERSION) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/a2a/{agent}',
    operationId: 'callA2AAgent',
    summary: 'A2A JSON-RPC endpoint of an exposed agent',
    description:
      'A2A over JSON-RPC 2.0 for an agent listed in Hangar:Exposure:A2A:Agents: message/send runs it to its end and answers the task (its id is the run id; completed with an answer artifact, or failed with the reason), message/stream answers as SSE (the task, appended artifact chunks, a final status-update), tasks/get and tasks/cancel act on its runs. Text parts only. Each message is a recorded run of kind Compatibility. A body that is no JSON-RPC request is 400; protocol errors are JSON-RPC errors.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'ExternalInvoke' },
    params: AgentParams,
    rawBody: true,
    documentedBody: { contentType: 'application/json', schema: { type: 'object', description: 'A JSON-RPC 2.0 request (A2A)' } },
    responses: {
      200: {
        description: 'The JSON-RPC answer; for message/stream, SSE frames of JSON-RPC results',
        schema: z.record(z.string(), z.unknown()),
      },
      404: problemResponse('Not an exposed agent'),
    },
    async handler({ params, body, caller, request, response, signal }, context) {
      const parsed = JsonRpcRequestSchema.safeParse(body);
      if (!parsed.success)
        throw validationError('the body is not a JSON-RPC 2.0 request', [{ path: 'body', message: 'is not a JSON-RPC request' }]);
      const rpc = parsed.data;
      const agent = await exposedAgent(context, caller, params.agent);
      const sendParams = () => MessageSendParamsSchema.safeParse(rpc.params);
      switch (rpc.method) {
        case 'message/send':
        case 'message/stream': {
          const message = sendParams();
          if (!message.success)
            return {
              status: 200,
              body: rpcError(rpc.id, RpcError.invalidParams, 'params must be { message } with a user role, a messageId and text parts'),
            };
          if (message.data.message.taskId)
            return {
              status: 200,
              body: rpcError(rpc.id, RpcError.unsupportedOperation, 'a task takes one message: continuing a task is not supported'),
            };
          const call = { context, caller, agentName: agent.name, request: rpc, params: message.data, signal };
          if (rpc.method === 'message/send') return { status: 200, body: await sendMessage(call) };
          return streamMessage(call, response);
        }
        case 'tasks/get': {
          const found = await taskOf(context, caller, agent.name, rpc);
          if ('error' in found) return { status: 200, body: found.error };
          const state = taskStateOf(found.run);
          const answer = state === 'completed' ? await answerOfRun(context, caller, found.run) : undefined;
          const reason = state === 'failed' ? (found.run.errorMessage ?? found.run.errorType) : undefined;
          return { status: 200, body: rpcResult(rpc.id, task(found.run.id, found.run.id, state, { answer, reason })) };
        }
        case 'tasks/cancel': {
          const found = await taskOf(context, caller, agent.name, rpc);
          if ('error' in found) return { status: 200, body: found.error };
          try {
            await context.runs.cancelRun({ runId: found.run.id }, { caller });
            // Requested: the run ends Canceled shortly (tasks/get reads it then).
            return { status: 200, body: rpcResult(rpc.id, task(found.run.id, found.run.id, 'canceled')) };
          } catch (error) {
            if (error instanceof HangarError && error.status === 409)
              return { status: 200, body: rpcError(rpc.id, RpcError.taskNotCancelable, `task ${found.run.id} is not running`) };
            throw error;
          }
        }
        default:
          return { status: 200, body: rpcError(rpc.id, RpcError.methodNotFound, `method ${rpc.method} is not served`) };
      }
    },
  }),
];

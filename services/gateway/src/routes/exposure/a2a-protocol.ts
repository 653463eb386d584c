import { randomUUID } from 'node:crypto';
import { runStatusFromProto, type runPb } from '@hangar/contracts';
import { z } from 'zod';

/**
 * The A2A protocol's JSON-RPC binding, as far as Hangar serves it (v0.3: `message/send`,
 * `message/stream`, `tasks/get`, `tasks/cancel`): a task is a run of the exposed agent, its id the
 * run's id.
 */
export const A2A_PROTOCOL_VERSION = '0.3.0';

/** JSON-RPC and A2A error codes. */
export const RpcError = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupportedOperation: -32004,
} as const;

export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  // A2A has no notifications: every request is answered, so it names its id.
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z.unknown().optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

const TextPartSchema = z.object({ kind: z.literal('text'), text: z.string() });

export const MessageSendParamsSchema = z.object({
  message: z.object({
    kind: z.literal('message').optional(),
    role: z.literal('user'),
    messageId: z.string().min(1),
    // Text parts only: Hangar agents take text turns (a file or data part is refused, not dropped).
    parts: z.array(TextPartSchema).min(1),
    contextId: z.string().optional(),
    taskId: z.string().optional(),
  }),
  configuration: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type MessageSendParams = z.infer<typeof MessageSendParamsSchema>;

export const TaskIdParamsSchema = z.object({ id: z.string().min(1), historyLength: z.number().int().optional() });

export type TaskState = 'submitted' | 'working' | 'completed' | 'canceled' | 'failed' | 'rejected';

/** A run's status as a task's state. */
export function taskStateOf(run: Pick<runPb.RunRecord, 'status'>): TaskState {
  switch (runStatusFromProto(run.status)) {
    case 'Queued':
      return 'submitted';
    case 'Completed':
      return 'completed';
    case 'Canceled':
      return 'canceled';
    case 'Failed':
      return 'failed';
    default:
      return 'working';
  }
}

export const textOf = (params: MessageSendParams) => params.message.parts.map((part) => part.text).join('\n');

export const agentMessage = (taskId: string, contextId: string, text: string) => ({
  kind: 'message' as const,
  messageId: randomUUID(),
  role: 'agent' as const,
  parts: [{ kind: 'text' as const, text }],
  taskId,
  contextId,
});

/** The answer as the task's one artifact. */
export const answerArtifact = (taskId: string, text: string) => ({
  artifactId: `${taskId}-answer`,
  name: 'answer',
  parts: [{ kind: 'text' as const, text }],
});

export function task(taskId: string, contextId: string, state: TaskState, options: { answer?: string; reason?: string } = {}) {
  return {
    kind: 'task' as const,
    id: taskId,
    contextId,
    status: {
      state,
      timestamp: new Date().toISOString(),
      ...(options.reason !== undefined && { message: agentMessage(taskId, contextId, options.reason) }),
    },
    artifacts: options.answer !== undefined ? [answerArtifact(taskId, options.answer)] : [],
  };
}

/** The agent card of an exposed agent: where to call it, what it speaks, how to authenticate. */
export const agentCard = (agent: { name: string; description?: string }, url: string, version: string) => ({
  protocolVersion: A2A_PROTOCOL_VERSION,
  name: agent.name,
  description: agent.description ?? `The Hangar agent ${agent.name}`,
  url,
  preferredTransport: 'JSONRPC',
  version,
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: agent.name, name: agent.name, description: agent.description ?? `Answers as ${agent.name}`, tags: ['hangar'] }],
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
  security: [{ bearer: [] }],
});

export const rpcResult = (id: JsonRpcRequest['id'], result: unknown) => ({ jsonrpc: '2.0' as const, id, result });
export const rpcError = (id: JsonRpcRequest['id'], code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0' as const,
  id,
  error: { code, message, ...(data !== undefined && { data }) },
});

import { RUN_STATUSES, RunMessageSchema, RunMessagesSchema, RunParametersSchema, runRecordJson, type runPb } from '@hangar/contracts';
import { z } from 'zod';

/** Request and response shapes of the run routes, and the proto → JSON mappers of their records. */

const RunRequestFields = z
  .strictObject({
    sessionId: z.string().optional(),
    message: RunMessageSchema.optional(),
    messages: RunMessagesSchema.optional(),
    attachments: z.array(z.string()).max(20).optional(),
    parameters: RunParametersSchema.optional(),
  })
  .refine((body) => (body.message === undefined) !== (body.messages === undefined), {
    message: 'give exactly one of message or messages',
    path: ['message'],
  });

/**
 * The body `useChat`'s default transport sends (`{ id, messages: UIMessage[], trigger, messageId }`)
 * read as a run request: each message's text parts become its content, a message without text
 * (only tool parts) is left out, and the transport's own fields are dropped. Any other body is
 * passed on as it is.
 */
function fromUIChatRequest(body: unknown): unknown {
  if (!body || typeof body !== 'object' || !('messages' in body) || !Array.isArray(body.messages)) return body;
  if (!body.messages.some((message) => message && typeof message === 'object' && Array.isArray(message.parts))) return body;
  const {
    id: _chatId,
    trigger: _trigger,
    messageId: _messageId,
    messages,
    ...rest
  } = body as Record<string, unknown> & { messages: any[] };
  const turns = messages
    .map((message) => ({
      role: message?.role,
      content: Array.isArray(message?.parts)
        ? message.parts
            .filter((part: any) => part?.type === 'text')
            .map((part: any) => part.text)
            .join('')
        : message?.content,
    }))
    .filter((turn) => turn.content !== '');
  return { ...rest, messages: turns };
}

export const RunRequestSchema = z
  .preprocess(fromUIChatRequest, RunRequestFields)
  .describe(
    'A run request; the AI SDK useChat body ({ id, messages: UIMessage[], trigger }) is read as one too (text parts become content)',
  )
  .meta({ id: 'RunRequest' });

export type RunRequest = z.infer<typeof RunRequestSchema>;

/** A run request as the run executor takes it; the conversation is `messages`, or the one `message` as a user message. */
export const startRunRequest = (agentName: string, body: RunRequest, isStreaming: boolean) => ({
  agentName,
  sessionId: body.sessionId,
  messages: body.messages ?? [{ role: 'user' as const, content: body.message! }],
  parameters: body.parameters ?? [],
  isStreaming,
  attachments: body.attachments ?? [],
});

export const RunStatusSchema = z.enum(RUN_STATUSES);
export const RunKindSchema = z.enum(['Interactive', 'Async', 'Child', 'Scheduled', 'Evaluation', 'Replay', 'Compatibility', 'Workflow', 'Voice']);

export const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedInputTokens: z.number(),
  reasoningTokens: z.number(),
  totalTokens: z.number(),
});
export const CostSchema = z
  .object({
    input: z.number().nullable(),
    output: z.number().nullable(),
    cachedInput: z.number().nullable(),
    total: z.number(),
    currency: z.string(),
  })
  .nullable();

export const RunRecordSchema = z
  .object({
    id: z.uuid(),
    agentName: z.string(),
    agentVersion: z.number().int().nullable(),
    sessionId: z.string().nullable(),
    status: RunStatusSchema,
    kind: RunKindSchema,
    isStreaming: z.boolean(),
    startedAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
    durationMs: z.number().nullable(),
    usage: UsageSchema,
    cost: CostSchema,
    modelProvider: z.string().nullable(),
    model: z.string().nullable(),
    errorType: z.string().nullable(),
    errorMessage: z.string().nullable(),
    parentRunId: z.uuid().nullable(),
    rootRunId: z.uuid(),
    depth: z.number().int(),
    userId: z.string().nullable(),
    labels: z.record(z.string(), z.string()),
  })
  .meta({ id: 'RunRecord' });

export const RunResponseSchema = z
  .object({
    runId: z.uuid(),
    sessionId: z.string().nullable(),
    status: z.string(),
    output: z.object({ text: z.string(), messages: z.array(z.object({ role: z.string(), content: z.string() })) }),
    usage: UsageSchema,
    cost: CostSchema,
  })
  .meta({ id: 'RunResponse' });

/** A run record as the API shows it (the same mapping webhooks deliver). */
export const runJson = (run: runPb.RunRecord | undefined) => runRecordJson(run!);

export const RunIdParams = z.object({ runId: z.string().describe('Run id (uuid)') });
export const ScoreParams = z.object({ runId: z.string(), scoreId: z.string() });
export const ApprovalParams = z.object({ runId: z.string(), approvalId: z.string() });

export const ApprovalSchema = z
  .object({
    id: z.uuid(),
    runId: z.uuid(),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
    status: z.enum(['Pending', 'Approved', 'Denied', 'Expired']),
    decidedBy: z.string().nullable(),
    comment: z.string().nullable(),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
    decidedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Approval' });

export const DecisionSchema = z
  .strictObject({
    approved: z.boolean().describe('true runs the tool call; false tells the model a person denied it'),
    comment: z.string().max(4096).optional(),
  })
  .meta({ id: 'ApprovalDecision' });

export const approvalJson = (approval: runPb.Approval) => ({
  id: approval.id,
  runId: approval.runId,
  toolCallId: approval.toolCallId,
  toolName: approval.toolName,
  args: approval.args ?? null,
  status: approval.status,
  decidedBy: approval.decidedBy ?? null,
  comment: approval.comment ?? null,
  createdAt: approval.createdAt,
  expiresAt: approval.expiresAt,
  decidedAt: approval.decidedAt ?? null,
});

export const FeedbackRequestSchema = z
  .strictObject({
    name: z.string().max(128).optional(),
    messageId: z.string().max(128).optional(),
    kind: z.enum(['Numeric', 'Boolean', 'Categorical']).optional(),
    value: z.number().optional(),
    textValue: z.string().max(1024).optional(),
    comment: z.string().max(4096).optional(),
  })
  .meta({ id: 'FeedbackRequest' });

export const ScoreSchema = z
  .object({
    id: z.uuid(),
    runId: z.uuid(),
    messageId: z.string().nullable(),
    name: z.string(),
    kind: z.enum(['Numeric', 'Boolean', 'Categorical']),
    value: z.number().nullable(),
    textValue: z.string().nullable(),
    source: z.enum(['Human', 'Evaluator']),
    author: z.string(),
    comment: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'RunScore' });

export const scoreJson = (score: runPb.Score | undefined) => ({
  id: score!.id,
  runId: score!.runId,
  messageId: score!.messageId ?? null,
  name: score!.name,
  kind: score!.kind,
  value: score!.value ?? null,
  textValue: score!.textValue ?? null,
  source: score!.source,
  author: score!.author,
  comment: score!.comment ?? null,
  createdAt: score!.createdAt,
  updatedAt: score!.updatedAt,
});

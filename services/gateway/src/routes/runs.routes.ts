import type { governancePb, runPb } from '@hangar/contracts';
import { HangarError, validationError, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { GatewayContext } from '../gateway.context.js';
import { z } from 'zod';
import { AgentNameParams, pageNumber, problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';
import { openEventStream } from '../http/sse.js';

const TAG = 'Runs';

const RunRequestSchema = z
  .strictObject({
    sessionId: z.string().optional(),
    message: z.string().min(1).max(1_000_000).optional(),
    messages: z
      .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(1_000_000) }))
      .min(1)
      .max(500)
      .optional(),
    attachments: z.array(z.string()).max(20).optional(),
    parameters: z
      .array(z.strictObject({ name: z.string().min(1).max(64), value: z.string() }))
      .max(64)
      .optional(),
  })
  .refine((body) => (body.message === undefined) !== (body.messages === undefined), {
    message: 'give exactly one of message or messages',
    path: ['message'],
  })
  .meta({ id: 'RunRequest' });

const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedInputTokens: z.number(),
  reasoningTokens: z.number(),
  totalTokens: z.number(),
});
const CostSchema = z
  .object({
    input: z.number().nullable(),
    output: z.number().nullable(),
    cachedInput: z.number().nullable(),
    total: z.number(),
    currency: z.string(),
  })
  .nullable();
const RunRecordSchema = z
  .object({
    id: z.uuid(),
    agentName: z.string(),
    agentVersion: z.number().int().nullable(),
    sessionId: z.string().nullable(),
    status: z.enum(['Queued', 'Running', 'Completed', 'Failed', 'Canceled', 'AwaitingApproval']),
    kind: z.enum(['Interactive', 'Async', 'Child', 'Scheduled', 'Evaluation', 'Replay', 'Compatibility']),
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

const RunResponseSchema = z
  .object({
    runId: z.uuid(),
    sessionId: z.string().nullable(),
    status: z.string(),
    output: z.object({ text: z.string(), messages: z.array(z.object({ role: z.string(), content: z.string() })) }),
    usage: UsageSchema,
    cost: CostSchema,
  })
  .meta({ id: 'RunResponse' });

export const runJson = (run: runPb.RunRecord | undefined) => ({
  id: run!.id,
  agentName: run!.agentName,
  agentVersion: run!.agentVersion ?? null,
  sessionId: run!.sessionId ?? null,
  status: run!.status,
  kind: run!.kind,
  isStreaming: run!.isStreaming,
  startedAt: run!.startedAt,
  completedAt: run!.completedAt ?? null,
  durationMs: run!.durationMs ?? null,
  usage: run!.usage,
  cost: run!.cost
    ? {
        input: run!.cost.input ?? null,
        output: run!.cost.output ?? null,
        cachedInput: run!.cost.cachedInput ?? null,
        total: run!.cost.total,
        currency: run!.cost.currency,
      }
    : null,
  modelProvider: run!.modelProvider ?? null,
  model: run!.model ?? null,
  errorType: run!.errorType ?? null,
  errorMessage: run!.errorMessage ?? null,
  parentRunId: run!.parentRunId ?? null,
  rootRunId: run!.rootRunId,
  depth: run!.depth,
  userId: run!.userId ?? null,
  labels: run!.labels,
});

/** A failed run answered as one JSON response: the status says whose fault it was. */
/**
 * SPEC Agents 11: after run authorization, quota. A used-up rule refuses the run with 429 before
 * anything starts. When governance cannot answer, `Quotas:AllowOnStoreFailure` decides.
 */
async function admitRun(agentName: string, caller: Caller, governance: GatewayContext['governance'], config: HangarConfig, logger: Logger) {
  if (!config.Quotas.Enabled) return;
  let decision: governancePb.AdmitRunResponse;
  try {
    decision = await governance.admitRun({ agentName }, { caller });
  } catch (error) {
    if (!config.Quotas.AllowOnStoreFailure) throw error;
    logger.warn({ err: (error as Error).message }, 'quota store unavailable; run admitted (Quotas:AllowOnStoreFailure)');
    return;
  }
  if (decision.admitted) return;
  const rule = decision.exceeded!;
  throw new HangarError(
    'tooManyRequests',
    `quota "${rule.name}" is used up (${rule.used} of ${rule.limit} ${rule.metric.toLowerCase()} per ${rule.period.toLowerCase()})`,
    { quota: rule.name, limit: rule.limit, used: rule.used, resetsAt: rule.resetsAt },
    'quota_exceeded',
  );
}

function failedRunError(failed: runPb.RunFailed): HangarError {
  const extensions = { runId: failed.run?.id };
  if (failed.errorType === 'content_blocked') return new HangarError('unprocessable', failed.message, extensions, 'content_blocked');
  return new HangarError('unavailable', failed.message, extensions, failed.errorType);
}

const RunIdParams = z.object({ runId: z.string().describe('Run id (uuid)') });
const ScoreParams = z.object({ runId: z.string(), scoreId: z.string() });
const ApprovalParams = z.object({ runId: z.string(), approvalId: z.string() });

const ApprovalSchema = z
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

const DecisionSchema = z
  .strictObject({
    approved: z.boolean().describe('true runs the tool call; false tells the model a person denied it'),
    comment: z.string().max(4096).optional(),
  })
  .meta({ id: 'ApprovalDecision' });

const approvalJson = (approval: runPb.Approval) => ({
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

const EstimateSchema = z
  .object({
    estimatedPromptTokens: z.number().int(),
    contextWindowTokens: z.number().int().nullable(),
    allowedPromptTokens: z.number().int().nullable(),
    wouldBeRejected: z.boolean(),
    tokenizer: z.string(),
  })
  .meta({ id: 'ContextWindowEstimate' });

const FeedbackRequestSchema = z
  .strictObject({
    name: z.string().max(128).optional(),
    messageId: z.string().max(128).optional(),
    kind: z.enum(['Numeric', 'Boolean', 'Categorical']).optional(),
    value: z.number().optional(),
    textValue: z.string().max(1024).optional(),
    comment: z.string().max(4096).optional(),
  })
  .meta({ id: 'FeedbackRequest' });

const ScoreSchema = z
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

const scoreJson = (score: runPb.Score | undefined) => ({
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
const optionalUuid = z.uuid().optional();

export const runRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/agents/{name}/estimate',
    operationId: 'estimateRun',
    summary: 'The numbers of the run pre-flight check (reference tokenizer, no provider contacted), whether or not the check is on',
    tag: 'Agents',
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: AgentNameParams,
    body: RunRequestSchema,
    responses: { 200: { description: 'Context window estimate', schema: EstimateSchema }, 404: problemResponse('Unknown agent') },
    async handler({ params, body, caller }, { registry, sessions }) {
      let history: Array<{ role: string; content: string }> = [];
      if (body.sessionId !== undefined) {
        try {
          const session = await sessions.getSession({ sessionId: body.sessionId }, { caller });
          history = session.messages.map((message) => ({
            role: message.role,
            content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
          }));
        } catch (error) {
          if ((error as HangarError).status !== 404) throw error; // a new session has no history yet
        }
      }
      const messages = [...history, ...(body.messages ?? [{ role: 'user', content: body.message! }])];
      const parameters = Object.fromEntries((body.parameters ?? []).map((parameter) => [parameter.name, parameter.value]));
      const estimate = await registry.estimateRun({ name: params.name, messages, parameters }, { caller });
      return {
        status: 200,
        body: {
          ...estimate,
          contextWindowTokens: estimate.contextWindowTokens ?? null,
          allowedPromptTokens: estimate.allowedPromptTokens ?? null,
        },
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/agents/{name}/run',
    operationId: 'runAgent',
    summary: 'Run an agent: SSE by default; one JSON response with Idempotency-Key; Prefer: respond-async queues it (202)',
    tag: 'Agents',
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: AgentNameParams,
    body: RunRequestSchema,
    runAuthorization: { operation: 'runs.start', denial: 'forbid', resourceId: (params) => params.name },
    responses: {
      200: {
        description: 'text/event-stream frames run, update, done, error — or, with Idempotency-Key, the JSON run response',
        schema: RunResponseSchema,
      },
      202: {
        description: 'Queued (Prefer: respond-async); Location names the run',
        schema: z
          .object({ runId: z.uuid(), status: z.literal('Queued'), statusUrl: z.string(), eventsUrl: z.string() })
          .meta({ id: 'AcceptedRun' }),
      },
      403: problemResponse('Denied, or another user’s session (session ownership)'),
      404: problemResponse('Unknown agent'),
      429: problemResponse('A quota rule is used up: quota, limit, used, resetsAt; Retry-After'),
      422: problemResponse('Content guard blocked the run (JSON mode)'),
      501: problemResponse('A factory agent (not runnable yet), or queued runs switched off'),
      503: problemResponse('No model provider could answer (JSON mode)'),
    },
    async handler({ params, body, caller, request, response }, { runs, governance, config, logger }) {
      await admitRun(params.name, caller, governance, config, logger);
      const messages = body.messages ?? [{ role: 'user', content: body.message! }];
      if (/\brespond-async\b/i.test(request.get('prefer') ?? '')) {
        const { run: queued } = await runs.enqueueRun(
          {
            run: {
              agentName: params.name,
              sessionId: body.sessionId,
              messages,
              parameters: body.parameters ?? [],
              isStreaming: false,
              attachments: body.attachments ?? [],
            },
          },
          { caller },
        );
        const statusUrl = `${config.Hangar.Api.Prefix}/api/runs/${queued!.id}`;
        return {
          status: 202,
          body: { runId: queued!.id, status: queued!.status, statusUrl, eventsUrl: `${statusUrl}/events` },
          headers: { Location: statusUrl, 'Preference-Applied': 'respond-async' },
        };
      }
      const oneResponse = request.get('idempotency-key') !== undefined;
      const abort = new AbortController();
      response.once('close', () => {
        if (!response.writableFinished) abort.abort();
      });
      const updates = runs
        .startRun(
          {
            agentName: params.name,
            sessionId: body.sessionId,
            messages,
            parameters: body.parameters ?? [],
            isStreaming: !oneResponse,
            attachments: body.attachments ?? [],
          },
          { caller, signal: abort.signal },
        )
        [Symbol.asyncIterator]();
      // Refusals (unknown agent, bad parameters, a foreign session) arrive before the first update: plain HTTP errors.
      const first = await updates.next();
      if (first.done || first.value.update?.$case !== 'started')
        throw new HangarError('unavailable', 'the run did not start', {}, 'service_unavailable');
      const run = first.value.update.value.run!;

      if (oneResponse) {
        for (let next = await updates.next(); !next.done; next = await updates.next()) {
          const update = next.value.update;
          if (update?.$case === 'failed') throw failedRunError(update.value);
          if (update?.$case === 'finished') {
            const finished = runJson(update.value.run);
            return {
              status: 200,
              body: {
                runId: finished.id,
                sessionId: finished.sessionId,
                status: finished.status,
                output: { text: update.value.outputText, messages: [{ role: 'assistant', content: update.value.outputText }] },
                usage: finished.usage,
                cost: finished.cost,
              },
            };
          }
        }
        throw new HangarError('unavailable', 'the run ended without an outcome', {}, 'service_unavailable');
      }

      const stream = openEventStream(response);
      stream.send('run', { runId: run.id, sessionId: run.sessionId ?? null, agentName: run.agentName, status: run.status });
      try {
        for (let next = await updates.next(); !next.done; next = await updates.next()) {
          const update = next.value.update;
          switch (update?.$case) {
            case 'textDelta':
              stream.send('update', { type: 'text-delta', text: update.value.text });
              break;
            case 'toolCall':
              stream.send('update', {
                type: 'tool-call',
                toolCallId: update.value.toolCallId,
                toolName: update.value.toolName,
                args: update.value.args ?? null,
              });
              break;
            case 'toolResult':
              stream.send('update', { type: 'tool-result', toolCallId: update.value.toolCallId, result: update.value.result ?? null });
              break;
            case 'childRun':
              stream.send('update', { type: 'child-run', runId: update.value.runId, agentName: update.value.agentName });
              break;
            case 'approvals':
              stream.send('approvals', {
                approvals: update.value.approvals.map((approval) => ({
                  id: approval.id,
                  toolName: approval.toolName,
                  args: approval.args ?? null,
                })),
              });
              break;
            case 'finished': {
              const finished = runJson(update.value.run);
              stream.send('done', {
                runId: finished.id,
                status: finished.status,
                usage: finished.usage,
                cost: finished.cost,
                output: { text: update.value.outputText },
              });
              break;
            }
            case 'failed':
              stream.send('error', { errorType: update.value.errorType, message: update.value.message });
              break;
          }
        }
      } catch (error) {
        if (!abort.signal.aborted)
          stream.send('error', { errorType: (error as HangarError).errorType ?? 'internal_error', message: 'the run stream broke off' });
      }
      stream.end();
      return { status: 200, sent: true };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs',
    operationId: 'listRuns',
    summary: 'Runs, newest first (root runs only unless includeChildren, parentRunId or rootRunId); take default 50, clamped to 1..200',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    query: z.object({
      agentName: z.string().optional(),
      status: z.enum(['Queued', 'Running', 'Completed', 'Failed', 'Canceled', 'AwaitingApproval']).optional(),
      kind: z.enum(['Interactive', 'Async', 'Child', 'Scheduled', 'Evaluation', 'Replay', 'Compatibility']).optional(),
      sessionId: z.string().optional(),
      errorType: z.string().optional(),
      userId: z.string().optional(),
      label: z.string().optional().describe('`key:value`, or a bare `key` matching any value'),
      startedAfter: z.iso.datetime({ offset: true }).optional(),
      includeChildren: z
        .enum(['true', 'false'])
        .optional()
        .transform((value) => value === 'true'),
      parentRunId: optionalUuid,
      rootRunId: optionalUuid,
      skip: pageNumber(0),
      take: pageNumber(50),
    }),
    runAuthorization: { operation: 'runs.list', denial: 'forbid' },
    responses: { 200: { description: 'Run records (never the conversation)', schema: RunRecordSchema.array() } },
    async handler({ query, caller }, { runs }) {
      const { runs: found } = await runs.listRuns({ ...query }, { caller });
      return { status: 200, body: found.map(runJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs/{runId}',
    operationId: 'getRun',
    summary: 'A run record: status, timings, token counts, cost when priced — no conversation',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: { 200: { description: 'Run record', schema: RunRecordSchema }, 404: problemResponse('Unknown run') },
    async handler({ params, caller }, { runs }) {
      return { status: 200, body: runJson((await runs.getRun({ runId: params.runId }, { caller })).run) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs/{runId}/tree',
    operationId: 'getRunTree',
    summary: 'Every run of the tree, resolved from the root whichever member is named; at most 200',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: { 200: { description: 'Run records, root first', schema: RunRecordSchema.array() }, 404: problemResponse('Unknown run') },
    async handler({ params, caller }, { runs }) {
      return { status: 200, body: (await runs.getRunTree({ runId: params.runId }, { caller })).runs.map(runJson) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/runs/{runId}/cancel',
    operationId: 'cancelRun',
    summary: 'Request cancellation (a root takes its children); 202 says only that it was requested',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: {
      202: { description: 'Cancellation requested; read the final status with GET', schema: RunRecordSchema },
      404: problemResponse('Unknown run'),
      409: problemResponse('The run is not executing on this instance'),
    },
    async handler({ params, caller }, { runs }) {
      return { status: 202, body: runJson((await runs.cancelRun({ runId: params.runId }, { caller })).run) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/runs/{runId}/feedback',
    operationId: 'saveRunFeedback',
    summary: 'Score a run or one of its messages; the same author, name and target again updates the score',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: RunIdParams,
    body: FeedbackRequestSchema,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: { 200: { description: 'The score', schema: ScoreSchema }, 404: problemResponse('Unknown run (or another tenant’s)') },
    async handler({ params, body, caller }, { runs }) {
      const { score } = await runs.saveFeedback({ runId: params.runId, ...body }, { caller });
      return { status: 200, body: scoreJson(score) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs/{runId}/feedback',
    operationId: 'listRunFeedback',
    summary: 'Human and evaluator scores of a run',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: { 200: { description: 'Scores', schema: ScoreSchema.array() }, 404: problemResponse('Unknown run (or another tenant’s)') },
    async handler({ params, caller }, { runs }) {
      return { status: 200, body: (await runs.listFeedback({ runId: params.runId }, { caller })).scores.map(scoreJson) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/runs/{runId}/feedback/{scoreId}',
    operationId: 'deleteRunFeedback',
    summary: 'Delete a score (not idempotent: an unknown score is 404)',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: ScoreParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('Unknown run or score') },
    async handler({ params, caller }, { runs }) {
      await runs.deleteFeedback({ runId: params.runId, scoreId: params.scoreId }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs/{runId}/approvals',
    operationId: 'listRunApprovals',
    summary: 'Tool calls of a run that waited or wait for a human decision (Approvals:RequiredTools)',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: { 200: { description: 'Approvals, oldest first', schema: ApprovalSchema.array() }, 404: problemResponse('Unknown run') },
    async handler({ params, caller }, { runs }) {
      return { status: 200, body: (await runs.listApprovals({ runId: params.runId }, { caller })).approvals.map(approvalJson) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/runs/{runId}/approvals/{approvalId}',
    operationId: 'decideRunApproval',
    summary: 'Approve or deny a pending tool call; the run goes on wherever it executes',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: ApprovalParams,
    body: DecisionSchema,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: {
      200: { description: 'The decided approval', schema: ApprovalSchema },
      404: problemResponse('Unknown run or approval'),
      409: problemResponse('The approval was already decided or expired'),
    },
    async handler({ params, body, caller }, { runs }) {
      const { approval } = await runs.decideApproval(
        { runId: params.runId, approvalId: params.approvalId, approved: body.approved, comment: body.comment },
        { caller },
      );
      return { status: 200, body: approvalJson(approval!) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs/{runId}/input',
    operationId: 'getRunInput',
    summary: 'The recorded input of a run (RunRecording:RecordRunInput)',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: {
      200: {
        description: 'The input as the run received it',
        schema: z.object({ runId: z.uuid(), recordedAt: z.iso.datetime(), input: z.record(z.string(), z.unknown()) }),
      },
      404: problemResponse('Unknown run, or no input was recorded'),
    },
    async handler({ params, caller }, { runs }) {
      const { input, recordedAt } = await runs.getRunInput({ runId: params.runId }, { caller });
      return { status: 200, body: { runId: params.runId, recordedAt, input } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/runs/{runId}/events',
    operationId: 'streamRunEvents',
    summary: 'The run’s events as SSE: history, then live, ending after the terminal event; resumes after Last-Event-ID',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: RunIdParams,
    runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
    responses: {
      200: { description: 'text/event-stream; each frame has id = seq', schema: z.string() },
      404: problemResponse('Unknown run'),
    },
    async handler({ params, caller, request, response }, { runs }) {
      const lastEventId = request.get('last-event-id');
      if (lastEventId !== undefined && !/^\d{1,9}$/.test(lastEventId)) {
        throw validationError('Last-Event-ID must be the sequence number of an event', [
          { path: 'Last-Event-ID', message: 'must be a non-negative integer' },
        ]);
      }
      await runs.getRun({ runId: params.runId }, { caller }); // 404 before the stream opens
      const abort = new AbortController();
      response.once('close', () => abort.abort());
      const stream = openEventStream(response);
      try {
        for await (const event of runs.streamRunEvents(
          { runId: params.runId, afterSeq: Number(lastEventId ?? 0) },
          { caller, signal: abort.signal },
        )) {
          stream.send(
            event.type,
            { seq: event.seq, runId: event.runId, type: event.type, at: event.at, data: event.data ?? {} },
            event.seq,
          );
        }
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      }
      stream.end();
      return { status: 200, sent: true };
    },
  }),
];

import { runStatusFromProto, runStatusToProto, type runPb as pb } from '@hangar/contracts';
import { validationError, type CallerContext } from '@hangar/platform';
import type { ApprovalRow } from './approvals/approval.model.js';
import type { createDiagnostics } from './diagnostics.js';
import type { ScoreRow } from './feedback/score.repository.js';
import { RUN_KINDS, requestableRunKind, type RunKind, type RunRow } from './runs/run.model.js';
import type { RunEngine } from './runs/run-engine.service.js';
import type { RunUpdate } from './runs/run-update.js';

export const runToProto = (run: RunRow): pb.RunRecord => ({
  id: run.id,
  agentName: run.agentName,
  agentVersion: run.agentVersion ?? undefined,
  sessionId: run.sessionId ?? undefined,
  status: runStatusToProto(run.status),
  kind: run.kind,
  isStreaming: run.isStreaming,
  startedAt: run.startedAt,
  completedAt: run.completedAt ?? undefined,
  durationMs: run.durationMs ?? undefined,
  usage: run.usage,
  cost: run.cost
    ? {
        input: run.cost.input ?? undefined,
        output: run.cost.output ?? undefined,
        cachedInput: run.cost.cachedInput ?? undefined,
        total: run.cost.total,
        currency: run.cost.currency,
      }
    : undefined,
  modelProvider: run.modelProvider ?? undefined,
  model: run.model ?? undefined,
  errorType: run.errorType ?? undefined,
  errorMessage: run.errorMessage ?? undefined,
  parentRunId: run.parentRunId ?? undefined,
  rootRunId: run.rootRunId,
  depth: run.depth,
  userId: run.userId ?? undefined,
  labels: run.labels,
});

const scoreToProto = (score: ScoreRow): pb.Score => ({
  ...score,
  messageId: score.messageId ?? undefined,
  value: score.value ?? undefined,
  textValue: score.textValue ?? undefined,
  comment: score.comment ?? undefined,
});

const approvalToProto = (approval: ApprovalRow): pb.Approval => ({
  ...approval,
  decidedBy: approval.decidedBy ?? undefined,
  comment: approval.comment ?? undefined,
  decidedAt: approval.decidedAt ?? undefined,
});

function updateToProto(update: RunUpdate): pb.StartRunResponse {
  switch (update.type) {
    case 'started':
      return { update: { $case: 'started', value: { run: runToProto(update.run) } } };
    case 'text-delta':
      return { update: { $case: 'textDelta', value: { text: update.text } } };
    case 'tool-call':
      return { update: { $case: 'toolCall', value: { toolCallId: update.toolCallId, toolName: update.toolName, args: update.args } } };
    case 'tool-result':
      return { update: { $case: 'toolResult', value: { toolCallId: update.toolCallId, result: update.result } } };
    case 'child-run':
      return { update: { $case: 'childRun', value: { runId: update.runId, agentName: update.agentName } } };
    case 'approvals':
      return { update: { $case: 'approvals', value: { approvals: update.approvals.map(approvalToProto) } } };
    case 'finished':
      return { update: { $case: 'finished', value: { run: runToProto(update.run), outputText: update.outputText } } };
    case 'failed':
      return { update: { $case: 'failed', value: { run: runToProto(update.run), errorType: update.errorType, message: update.message } } };
  }
}

const oneOf = <T extends string>(values: readonly T[], value: string | undefined, path: string): T | undefined => {
  if (value === undefined) return undefined;
  if (!values.includes(value as T))
    throw validationError(`${path} must be one of ${values.join(', ')}`, [{ path, message: `must be one of ${values.join(', ')}` }]);
  return value as T;
};

/**
 * A canceled call can leave the transport waiting for a drain that never comes, never asking for
 * the next item: the source is closed from here when the call is canceled, so its `finally` runs.
 */
async function* closedOnCancel<T>(source: AsyncGenerator<T>, signal: AbortSignal): AsyncGenerator<T> {
  const close = () => void source.return(undefined).catch(() => {});
  signal.addEventListener('abort', close, { once: true });
  try {
    yield* source;
  } finally {
    signal.removeEventListener('abort', close);
  }
}

const unknownStatus = (status: number): never => {
  throw validationError(`status ${status} is not a run status`, [{ path: 'status', message: 'must be a run status' }]);
};

export function runExecutorGrpc(
  engine: RunEngine,
  diagnose: ReturnType<typeof createDiagnostics>,
): pb.RunExecutorServiceImplementation<CallerContext> {
  return {
    async *startRun(request, { caller, signal }) {
      const updates = engine.start(
        caller,
        {
          agentName: request.agentName,
          sessionId: request.sessionId,
          messages: request.messages,
          parameters: request.parameters,
          isStreaming: request.isStreaming,
          attachments: request.attachments,
          kind: requestableRunKind(request.kind),
          clientMetadata: request.clientMetadata,
          instructions: request.instructions,
          agentVersion: request.agentVersion,
        },
        signal,
      );
      // The engine ends the run Canceled when its stream is closed.
      for await (const update of closedOnCancel(updates, signal)) yield updateToProto(update);
    },
    async estimateRunPrompt({ run: request }, { caller }) {
      if (!request) throw validationError('run is required', [{ path: 'run', message: 'is required' }]);
      const estimate = await engine.estimate(caller, { ...request, kind: requestableRunKind(request.kind), isStreaming: false });
      return {
        ...estimate,
        contextWindowTokens: estimate.contextWindowTokens ?? undefined,
        allowedPromptTokens: estimate.allowedPromptTokens ?? undefined,
      };
    },
    async enqueueRun({ run: request }, { caller }) {
      if (!request) throw validationError('run is required', [{ path: 'run', message: 'is required' }]);
      const run = await engine.enqueue(caller, {
        agentName: request.agentName,
        sessionId: request.sessionId,
        messages: request.messages,
        parameters: request.parameters,
        isStreaming: false,
        attachments: request.attachments,
      });
      return { run: runToProto(run) };
    },
    async getRun({ runId }, { caller }) {
      return { run: runToProto(await engine.get(caller, runId)) };
    },
    async listRuns(request, { caller }) {
      const runs = await engine.list(caller, {
        agentName: request.agentName,
        status: request.status === undefined ? undefined : (runStatusFromProto(request.status) ?? unknownStatus(request.status)),
        kind: oneOf<RunKind>(RUN_KINDS, request.kind, 'kind'),
        sessionId: request.sessionId,
        errorType: request.errorType,
        userId: request.userId,
        label: request.label,
        startedAfter: request.startedAfter,
        includeChildren: request.includeChildren,
        parentRunId: request.parentRunId,
        rootRunId: request.rootRunId,
        skip: request.skip,
        take: request.take,
      });
      return { runs: runs.map(runToProto) };
    },
    async getRunInput({ runId }, { caller }) {
      return engine.input(caller, runId);
    },
    async *streamRunEvents({ runId, afterSeq }, { caller, signal }) {
      for await (const event of closedOnCancel(engine.events(caller, runId, afterSeq, signal), signal)) yield event;
    },
    async getRunTrace({ runId }, { caller }) {
      const spans = await engine.trace(caller, runId);
      return { spans: spans.map((span) => ({ ...span, parentSpanId: span.parentSpanId ?? undefined })) };
    },
    async getRunTree({ runId }, { caller }) {
      return { runs: (await engine.tree(caller, runId)).map(runToProto) };
    },
    async cancelRun({ runId }, { caller }) {
      return { run: runToProto(await engine.cancel(caller, runId)) };
    },
    async saveFeedback({ runId, ...request }, { caller }) {
      const { score, created } = await engine.saveFeedback(caller, runId, request);
      return { score: scoreToProto(score), created };
    },
    async listFeedback({ runId }, { caller }) {
      return { scores: (await engine.listFeedback(caller, runId)).map(scoreToProto) };
    },
    async listApprovals({ runId }, { caller }) {
      return { approvals: (await engine.listApprovals(caller, runId)).map(approvalToProto) };
    },
    async decideApproval({ runId, approvalId, approved, comment }, { caller }) {
      return { approval: approvalToProto(await engine.decideApproval(caller, runId, approvalId, { approved, comment })) };
    },
    async getModelHealth() {
      return {
        models: engine.modelHealth().map((entry) => ({
          ...entry,
          lastSuccessAt: entry.lastSuccessAt ?? undefined,
          lastFailureAt: entry.lastFailureAt ?? undefined,
          latencyMsP50: entry.latencyMsP50 ?? undefined,
        })),
      };
    },
    async getDiagnostics() {
      return diagnose();
    },
    async deleteFeedback({ runId, scoreId }, { caller }) {
      await engine.deleteFeedback(caller, runId, scoreId);
      return {};
    },
  };
}

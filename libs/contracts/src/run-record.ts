import type { RunRecord } from './generated/hangar/v1/run_executor.js';
import { runStatusFromProto } from './run-status.js';

/** A run record as the HTTP API shows it (GET /api/runs/{id}) and webhooks deliver it (`run.*`). */
export const runRecordJson = (run: RunRecord) => ({
  id: run.id,
  agentName: run.agentName,
  agentVersion: run.agentVersion ?? null,
  sessionId: run.sessionId ?? null,
  status: runStatusFromProto(run.status) ?? null,
  kind: run.kind,
  isStreaming: run.isStreaming,
  startedAt: run.startedAt,
  completedAt: run.completedAt ?? null,
  durationMs: run.durationMs ?? null,
  usage: run.usage,
  cost: run.cost
    ? {
        input: run.cost.input ?? null,
        output: run.cost.output ?? null,
        cachedInput: run.cost.cachedInput ?? null,
        total: run.cost.total,
        currency: run.cost.currency,
      }
    : null,
  modelProvider: run.modelProvider ?? null,
  model: run.model ?? null,
  errorType: run.errorType ?? null,
  errorMessage: run.errorMessage ?? null,
  parentRunId: run.parentRunId ?? null,
  rootRunId: run.rootRunId,
  depth: run.depth,
  userId: run.userId ?? null,
  labels: run.labels,
});

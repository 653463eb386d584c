import { announceStored, type EventWriterDeps } from '../events/event-writer.js';
import type { RunOutcome, RunRow } from './run.model.js';
import type { RunRepository } from './run.repository.js';

/** The terminal event of an outcome: `run.completed`, `run.canceled` or `run.failed` with its error. */
export function terminalEvent(outcome: Pick<RunOutcome, 'status' | 'usage' | 'cost' | 'errorType' | 'errorMessage'>) {
  const data = { usage: outcome.usage, cost: outcome.cost };
  if (outcome.status === 'Completed') return { type: 'run.completed', data };
  if (outcome.status === 'Canceled') return { type: 'run.canceled', data };
  return { type: 'run.failed', data: { errorType: outcome.errorType, message: outcome.errorMessage, ...data } };
}

/**
 * A run's end as every path records it (its own execution, a queued run that cannot start, a
 * workflow and its steps): the row's ending and its terminal event in one commit, the event then
 * announced (pub/sub, a direct event log); without recording, the row alone. Undefined when the run
 * had ended before: the other ending stands, with its terminal event.
 */
export async function recordRunEnd(
  deps: { runs: Pick<RunRepository, 'finish' | 'finishWithEvent'>; writer: EventWriterDeps },
  run: { tenantId: string; runId: string; traceparent?: string },
  outcome: RunOutcome,
): Promise<RunRow | undefined> {
  if (!deps.writer.enabled) return deps.runs.finish(run.runId, outcome);
  const terminal = { ...terminalEvent(outcome), ...(run.traceparent && { traceparent: run.traceparent }) };
  const ending = await deps.runs.finishWithEvent(run.tenantId, run.runId, outcome, terminal);
  if (!ending) return undefined;
  await announceStored(deps.writer, ending.target, [ending.event]);
  return ending.run;
}

import { runStatusFromProto, type QuotaThresholdNotice, type runPb } from '@hangar/contracts';
import { classifyError, HangarError } from '@hangar/platform';
import type { Response } from 'express';
import { runJson } from '../routes/runs/runs.schemas.js';
import { openEventStream } from './sse.js';

/**
 * A started run's gRPC stream (run-executor `StartRun`) as HTTP: one JSON response, or SSE frames
 * run, update, approvals, done, error. Both read the updates that follow `started`.
 */

type RunUpdates = AsyncIterator<runPb.StartRunResponse>;

/** A failed run answered as one JSON response: the status says whose fault it was. */
function failedRunError(failed: runPb.RunFailed): HangarError {
  const extensions = { runId: failed.run?.id };
  if (failed.errorType === 'content_blocked') return new HangarError('unprocessable', failed.message, extensions, 'content_blocked');
  return new HangarError('unavailable', failed.message, extensions, failed.errorType);
}

/**
 * The run record of the first update, which is `started` once the run row exists. Refusals (a
 * used-up quota, an unknown agent, bad parameters, a foreign session) are thrown before it.
 */
export async function startedRun(updates: RunUpdates): Promise<runPb.RunRecord> {
  const first = await updates.next();
  if (first.done || first.value.update?.$case !== 'started')
    throw new HangarError('unavailable', 'the run did not start', {}, 'service_unavailable');
  return first.value.update.value.run!;
}

/** The tool calls awaiting a decision, as the run stream shows them. */
export const pendingApprovalsJson = (approvals: runPb.Approval[]) =>
  approvals.map((approval) => ({ id: approval.id, toolName: approval.toolName, args: approval.args ?? null }));

/** Waits for the outcome: the RunResponse body when the run finished, a problem when it failed. */
export async function runResponseBody(updates: RunUpdates) {
  for (let next = await updates.next(); !next.done; next = await updates.next()) {
    const update = next.value.update;
    if (update?.$case === 'failed') throw failedRunError(update.value);
    if (update?.$case === 'finished') {
      const finished = runJson(update.value.run);
      return {
        runId: finished.id,
        sessionId: finished.sessionId,
        status: finished.status,
        output: { text: update.value.outputText, messages: [{ role: 'assistant', content: update.value.outputText }] },
        usage: finished.usage,
        cost: finished.cost,
      };
    }
  }
  throw new HangarError('unavailable', 'the run ended without an outcome', {}, 'service_unavailable');
}

/** Where quota threshold notices of a run tree are heard while its stream is open (Quotas:PublishThresholdToRunStream). */
export type RunNotices = (rootRunId: string, onNotice: (notice: QuotaThresholdNotice) => void) => Promise<{ unsubscribe(): Promise<void> }>;

/**
 * SSE frames until the updates end; `signal` (the client left) tells a departure from a stream that
 * broke off. With `notices`, a quota threshold notice heard meanwhile is an `update` frame of its own.
 */
export async function streamRunUpdates(
  response: Response,
  run: runPb.RunRecord,
  updates: RunUpdates,
  signal: AbortSignal,
  notices?: RunNotices,
) {
  const stream = openEventStream(response);
  stream.send('run', { runId: run.id, sessionId: run.sessionId ?? null, agentName: run.agentName, status: runStatusFromProto(run.status) });
  let ended = false;
  // Subscribed beside the run's first updates, not before them: a notice is a hint (the webhook and the trail are the record).
  const listening = notices?.(run.rootRunId, (notice) => {
    if (!ended) stream.send('update', { type: 'quota-threshold', ...notice });
  }).catch(() => undefined);
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
            approvals: pendingApprovalsJson(update.value.approvals),
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
    if (!signal.aborted)
      stream.send('error', { errorType: classifyError(error)?.errorType ?? 'internal_error', message: 'the run stream broke off' });
  } finally {
    ended = true;
    await (await listening)?.unsubscribe();
  }
  stream.end();
}

import type { Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import type { JsonBody, JsonResult } from './operation-types.js';
import { dataOrThrow, HangarProblemError } from './problem-error.js';
import { backoffDelay, pause, type RetryPolicy } from './retrying-fetch.js';
import { parseSse } from './sse-parser.js';

export type RunRequest = JsonBody<'runAgent'>;
export type RunResponse = JsonResult<'runAgent', 200>;
export type AcceptedRun = JsonResult<'runAgent', 202>;
type RunUsage = RunResponse['usage'];

/** Frames of `POST /api/agents/{name}/run` (API.md "Runs"): `run` first, then updates, then `done` or `error`. */
export type RunStreamFrame =
  | { event: 'run'; data: { runId: string; sessionId: string | null; agentName: string; status: string } }
  | {
      event: 'update';
      data:
        | { type: 'text-delta'; text: string }
        | { type: 'tool-call'; toolCallId: string; toolName: string; args: unknown }
        | { type: 'tool-result'; toolCallId: string; result: unknown }
        | { type: 'child-run'; runId: string; agentName: string }
        | { type: 'quota-threshold'; quota: string; percent: number; limit: number; used: number; resetsAt: string };
    }
  | { event: 'approvals'; data: { approvals: Array<{ id: string; toolName: string; args: unknown }> } }
  | { event: 'done'; data: { runId: string; status: string; usage: RunUsage; cost: RunResponse['cost']; output: RunResponse['output'] } }
  | { event: 'error'; data: { errorType: string; message: string } };

/** A frame of `GET /api/runs/{id}/events`: `seq` counts 1, 2, 3, … per run. */
export interface RunEvent {
  seq: number;
  runId: string;
  type: string;
  at: string;
  data: Record<string, unknown>;
}

export interface RunEventsOptions {
  /** Start after this event (its `seq`); from the first event when absent. */
  lastEventId?: number | string;
  signal?: AbortSignal;
  /** Tries to open the stream again in a row, without an event read in between, before giving up (default 5). */
  maxReconnects?: number;
}

/** The event types after which a run's stream ends (run-executor's TERMINAL_EVENTS). */
const TERMINAL_EVENT_TYPES = new Set(['run.completed', 'run.failed', 'run.canceled']);
const TERMINAL_STATUSES = new Set(['Completed', 'Failed', 'Canceled']);
const RECONNECT_POLICY: RetryPolicy = { attempts: 5, baseDelayMs: 200, maxDelayMs: 5_000 };

type Raw = Client<paths>;

/** Frames of a run started over SSE. Leaving the loop early closes the connection, which cancels the run. */
export async function* streamRun(raw: Raw, name: string, request: RunRequest, signal?: AbortSignal): AsyncGenerator<RunStreamFrame> {
  const body = dataOrThrow(
    await raw.POST('/api/agents/{name}/run', { params: { path: { name } }, body: request, parseAs: 'stream', signal }),
  );
  for await (const frame of parseSse(body!)) yield { event: frame.event, data: JSON.parse(frame.data) } as RunStreamFrame;
}

/** One connection's events after `afterSeq`; an event at or before the position is not yielded again. */
async function* readEventsOnce(raw: Raw, runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<RunEvent> {
  const body = dataOrThrow(
    await raw.GET('/api/runs/{runId}/events', {
      params: { path: { runId } },
      headers: afterSeq ? { 'Last-Event-ID': String(afterSeq) } : {},
      parseAs: 'stream',
      signal,
    }),
  );
  let position = afterSeq;
  for await (const frame of parseSse(body!)) {
    const event = JSON.parse(frame.data) as RunEvent;
    if (event.seq <= position) continue;
    position = event.seq;
    yield event;
  }
}

/** Worth opening the stream again: the connection dropped or the gateway was briefly unavailable, not a refusal. */
const isTransient = (error: unknown) => (error instanceof HangarProblemError ? error.status >= 500 : !(error instanceof SyntaxError));

async function runHasEnded(raw: Raw, runId: string, signal?: AbortSignal): Promise<boolean> {
  const run = dataOrThrow(await raw.GET('/api/runs/{runId}', { params: { path: { runId } }, signal }));
  return TERMINAL_STATUSES.has(run.status);
}

/**
 * A run's events until its terminal one. After a dropped connection (or a stream that ended early)
 * it reconnects with `Last-Event-ID` = the last `seq` it yielded, so no event is yielded twice or
 * skipped. A stream that ends without a terminal event while the run has ended (its events were
 * purged, or not recorded) ends here too.
 */
export async function* followRunEvents(raw: Raw, runId: string, options: RunEventsOptions = {}): AsyncGenerator<RunEvent> {
  const { signal, maxReconnects = RECONNECT_POLICY.attempts } = options;
  let position = Number(options.lastEventId ?? 0);
  let failures = 0;
  for (;;) {
    let endedCleanly = false;
    try {
      for await (const event of readEventsOnce(raw, runId, position, signal)) {
        position = event.seq;
        failures = 0;
        yield event;
        if (TERMINAL_EVENT_TYPES.has(event.type)) return;
      }
      endedCleanly = true;
    } catch (error) {
      if (signal?.aborted || !isTransient(error)) throw error;
    }
    if (endedCleanly && (await runHasEnded(raw, runId, signal))) return;
    if (++failures > maxReconnects) throw new Error(`the events of run ${runId} could not be read after ${maxReconnects} reconnections`);
    await pause(backoffDelay(RECONNECT_POLICY, failures), signal);
  }
}

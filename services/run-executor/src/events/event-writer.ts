import { context } from '@opentelemetry/api';
import { contextOfTraceparent } from '@hangar/platform';
import { retryWhileUnavailable, type Recorder } from '../recording.js';
import { createWakeablePause } from '../wakeable-pause.js';
import type { TypedPubSub } from './channels.js';
import { channels } from './channels.js';
import type { RunEventEnvelope } from '@hangar/contracts';
import type { NewLogRecord } from '@hangar/messaging';
import type { NewRunEvent, RunEventRow, RunEventTarget } from './event.model.js';
import type { EventRepository } from './event.repository.js';

/** Records an event; `batch` lets it wait up to the writer's batch window for others (a text delta). */
export type Emit = (type: string, data: Record<string, unknown>, options?: { batch?: boolean }) => Promise<void>;

export interface EventWriterDeps {
  events: Pick<EventRepository, 'appendEvents' | 'lastSeq'>;
  pubsub: TypedPubSub;
  record: Recorder;
  /** Told after events were stored, so the outbox relay ships them soon. */
  eventsStored: () => void;
  /** `RunRecording:Enabled` false keeps the run record (status, usage, cost) but no event log. */
  enabled: boolean;
  /** Hands stored events to an in-process event log directly (a durable one is fed by the outbox instead). */
  shipDirect?: (records: NewLogRecord[]) => Promise<void>;
  /** `Hangar:Runs:EventBatchWindow`: how long an idle writer waits after a batchable event. */
  batchWindowMs: number;
}

const NEVER = new AbortController().signal;

/**
 * Writes one run's events in order, so the caller's stream never waits for the store: what
 * arrives while a write is in flight goes in the next one, as one multi-row statement (a streamed
 * answer emits an event per text delta). A batchable event that finds the writer idle waits up to
 * the batch window for company; any other event, or draining, cuts the wait short. Each event is
 * published only once stored; a failed publication is only a missed wake-up (readers find the
 * event in the table). The run waits for the writer to drain before it ends. With `ready` (a new
 * run's row, written meanwhile) nothing is written before it settles.
 */
export function createEventWriter(deps: EventWriterDeps, target: RunEventTarget, afterSeq = 0, ready?: Promise<unknown>) {
  let seq = afterSeq;
  let waiting: Array<NewRunEvent & { stored: () => void }> = [];
  let writing: Promise<void> = Promise.resolve();
  let inFlight = false;
  const batchWindow = createWakeablePause();
  const runContext = contextOfTraceparent(target.traceparent);
  let rowReady = ready === undefined;
  void ready?.then(() => (rowReady = true));

  async function writeWaiting(lingering: boolean) {
    inFlight = true;
    // Only while the row is still being written: an await more would change what a batch holds.
    if (!rowReady) await ready;
    if (lingering && deps.batchWindowMs > 0) await batchWindow.sleep(deps.batchWindowMs, NEVER);
    while (waiting.length) {
      const batch = waiting;
      waiting = [];
      // A short outage delays the log rather than losing from it (a run's terminal event among them).
      const stored = await deps.record(`events ${batch[0].type}…`, () =>
        retryWhileUnavailable(() =>
          deps.events.appendEvents(
            target,
            batch.map(({ seq, type, data }) => ({ seq, type, data })),
          ),
        ),
      );
      if (stored) await announceStored(deps, target, stored);
      for (const event of batch) event.stored();
    }
    inFlight = false;
  }

  const emit: Emit = (type, data, options) => {
    if (!deps.enabled) return Promise.resolve();
    const done = new Promise<void>((stored) => waiting.push({ seq: ++seq, type, data, stored }));
    const batch = options?.batch === true;
    // In the run's trace whoever's emit finds the writer idle: its statements are the run's.
    if (!inFlight) writing = context.with(runContext, () => writeWaiting(batch));
    else if (!batch) batchWindow.wake();
    return done;
  };
  /** Everything emitted so far is stored (or given up): written now, without waiting out a batch window. */
  const drained = () => {
    batchWindow.wake();
    return writing;
  };
  return { emit, drained };
}

export type EventWriter = ReturnType<typeof createEventWriter>;

/**
 * Tells of events once they are stored: the outbox relay (to ship them soon), the in-process event
 * log (fed directly), and the run's live readers over pub/sub. A failure is only logged: readers
 * find the events in the table.
 */
export async function announceStored(deps: EventWriterDeps, target: RunEventTarget, stored: RunEventRow[]) {
  deps.eventsStored();
  if (deps.shipDirect) {
    const records = stored.map((event) => ({
      key: target.rootRunId,
      value: JSON.stringify(envelopeOf(target, event)),
      ...(target.traceparent && { traceparent: target.traceparent }),
    }));
    await deps.record('event log', () => deps.shipDirect!(records));
  }
  await deps.record('event publication', async () => {
    for (const event of stored) await deps.pubsub.publish(channels.runEvents(target.runId), event);
  });
}

/** A stored event as the event log carries it (the outbox writes the same envelope). */
export const envelopeOf = (target: RunEventTarget, event: RunEventRow): RunEventEnvelope => ({
  tenantId: target.tenantId,
  runId: event.runId,
  rootRunId: target.rootRunId,
  agentName: target.agentName,
  seq: event.seq,
  type: event.type,
  at: event.at,
  data: event.data,
  ...(target.traceparent && { traceparent: target.traceparent }),
});

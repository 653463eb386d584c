import type { Logger } from '@hangar/platform';
import type { Subscription } from '@hangar/messaging';
import { TERMINAL_STATUSES, type RunRow } from '../runs/run.model.js';
import { createWakeablePause } from '../wakeable-pause.js';
import { channels, type TypedPubSub } from './channels.js';
import { TERMINAL_EVENTS, type RunEventRow } from './event.model.js';
import type { EventRepository } from './event.repository.js';

export interface EventTailDeps {
  events: Pick<EventRepository, 'events'>;
  pubsub: TypedPubSub;
  /** The run as stored now; undefined once it is gone. */
  currentRun: (tenantId: string, runId: string) => Promise<RunRow | undefined>;
  pollIntervalMs: number;
  logger: Logger;
}

interface Follower {
  /** The sequence this reader has read up to. */
  position(): number;
  deliver(event: RunEventRow): void;
  /** The run ended without (or its tail lost) a terminal event. */
  end(): void;
}

/** One run followed for every reader in this process: one subscription, one poll of the table. */
interface SharedTail {
  followers: Set<Follower>;
  stop(): void;
}

/**
 * Run event tails. Every reader of a run's events in this process shares one tail: live events
 * arrive with their pub/sub message (no read per event), and one poll of the table per run and
 * `RunEventPollInterval` catches what a lost message missed and notices a run that ended without
 * a terminal event (purged, or recording off: two intervals after its row says so). A reader
 * first reads the table after its `afterSeq`; a gap in what it is handed is read from the table,
 * and the poll reads after the position of the reader furthest behind.
 */
export function createEventTails(deps: EventTailDeps) {
  const tails = new Map<string, SharedTail>();

  function follow(tenantId: string, runId: string, follower: Follower): SharedTail {
    const existing = tails.get(runId);
    if (existing) {
      existing.followers.add(follower);
      return existing;
    }
    const pause = createWakeablePause();
    const stopped = new AbortController();
    const deliver = (event: RunEventRow) => {
      for (const each of tail.followers) each.deliver(event);
    };
    let subscription: Subscription | undefined;
    const tail: SharedTail = {
      followers: new Set([follower]),
      stop() {
        stopped.abort();
        tails.delete(runId);
        void subscription?.unsubscribe();
      },
    };
    tails.set(runId, tail);
    deps.pubsub.subscribe(channels.runEvents(runId), deliver).then(
      (subscribed) => {
        if (stopped.signal.aborted) void subscribed.unsubscribe();
        else subscription = subscribed;
      },
      // Without pub/sub the tail still polls the table.
      (error) => deps.logger.warn({ err: error, runId }, 'live run events unavailable; polling only'),
    );
    void (async () => {
      let finishedAt: number | undefined;
      while (!stopped.signal.aborted) {
        await pause.sleep(deps.pollIntervalMs, stopped.signal);
        if (stopped.signal.aborted) return;
        try {
          const behind = Math.min(...[...tail.followers].map((each) => each.position()));
          const missed = await deps.events.events(tenantId, runId, behind);
          missed.forEach(deliver);
          if (missed.length) continue;
          const run = await deps.currentRun(tenantId, runId);
          if (run && !TERMINAL_STATUSES.has(run.status)) continue;
          finishedAt ??= Date.now();
          if (!run || Date.now() - finishedAt > 2 * deps.pollIntervalMs) for (const each of tail.followers) each.end();
        } catch (error) {
          deps.logger.warn({ err: error, runId }, 'run event poll failed');
        }
      }
    })();
    return tail;
  }

  /** Stored events after `afterSeq`, then live ones until the run's terminal event. */
  async function* tail(tenantId: string, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<RunEventRow> {
    const handed: RunEventRow[] = [];
    const pause = createWakeablePause();
    let ended = false;
    let last = afterSeq;
    const follower: Follower = {
      position: () => last,
      deliver(event) {
        handed.push(event);
        pause.wake();
      },
      end() {
        ended = true;
        pause.wake();
      },
    };
    const shared = follow(tenantId, runId, follower);
    /** Reads the table after `last`; true once the terminal event was read. */
    const readStored = async function* () {
      for (const event of await deps.events.events(tenantId, runId, last)) {
        yield event;
        last = event.seq;
        if (TERMINAL_EVENTS.has(event.type)) return true;
      }
      return false;
    };
    try {
      if (yield* readStored()) return;
      while (!signal.aborted) {
        while (handed.length) {
          const event = handed.shift()!;
          if (event.seq <= last) continue;
          if (event.seq > last + 1) {
            if (yield* readStored()) return;
            continue;
          }
          yield event;
          last = event.seq;
          if (TERMINAL_EVENTS.has(event.type)) return;
        }
        if (ended) {
          // The run ended without a terminal event reaching this reader: what the table has is all there is.
          yield* readStored();
          return;
        }
        // The shared tail hands over what arrives and ends the reader: an idle reader needs no timer of its own.
        await pause.sleep(Infinity, signal);
      }
    } finally {
      shared.followers.delete(follower);
      if (!shared.followers.size) shared.stop();
    }
  }

  return { tail, following: () => tails.size };
}

export type EventTails = ReturnType<typeof createEventTails>;

import type { Logger } from '@hangar/platform';
import type { Subscription } from '@hangar/messaging';
import { createWakeablePause } from '../wakeable-pause.js';
import { channels, type TypedPubSub } from './channels.js';
import { TERMINAL_EVENTS, type RunEventRow } from './event.model.js';
import type { EventRepository } from './event.repository.js';

export interface EventTailDeps {
  events: Pick<EventRepository, 'events' | 'followedRuns'>;
  pubsub: TypedPubSub;
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

/** One run followed for every reader in this process: one subscription. */
interface SharedTail {
  tenantId: string;
  followers: Set<Follower>;
  deliver(event: RunEventRow): void;
  /** When the poll first found the run ended without its terminal event reaching the readers. */
  finishedAt?: number;
  stop(): void;
}

/**
 * Run event tails. Every reader of a run's events in this process shares one tail: live events
 * arrive with their pub/sub message (no read per event). One poll per `RunEventPollInterval` for
 * every run followed in the process (one statement, however many runs and readers are idle) finds
 * the runs whose table is ahead of a reader (a lost message) and reads those, and notices a run that
 * ended without a terminal event (purged, or recording off: two intervals after its row says so).
 * A reader first reads the table after its `afterSeq`; a gap in what it is handed is read from the
 * table, and a catch-up reads after the position of the reader furthest behind.
 */
export function createEventTails(deps: EventTailDeps) {
  const tails = new Map<string, SharedTail>();
  let polling: AbortController | undefined;

  function follow(tenantId: string, runId: string, follower: Follower): SharedTail {
    const existing = tails.get(runId);
    if (existing) {
      existing.followers.add(follower);
      return existing;
    }
    let subscription: Subscription | undefined;
    let stopped = false;
    const tail: SharedTail = {
      tenantId,
      followers: new Set([follower]),
      deliver(event) {
        for (const each of tail.followers) each.deliver(event);
      },
      stop() {
        stopped = true;
        tails.delete(runId);
        void subscription?.unsubscribe();
        if (!tails.size) {
          polling?.abort();
          polling = undefined;
        }
      },
    };
    tails.set(runId, tail);
    deps.pubsub.subscribe(channels.runEvents(runId), tail.deliver).then(
      (subscribed) => {
        if (stopped) void subscribed.unsubscribe();
        else subscription = subscribed;
      },
      // Without pub/sub the tail still learns from the poll.
      (error) => deps.logger.warn({ err: error, runId }, 'live run events unavailable; polling only'),
    );
    if (!polling) {
      polling = new AbortController();
      void poll(polling.signal);
    }
    return tail;
  }

  async function poll(stopped: AbortSignal) {
    const pause = createWakeablePause();
    while (!stopped.aborted) {
      await pause.sleep(deps.pollIntervalMs, stopped);
      if (stopped.aborted) return;
      const followed = [...tails];
      try {
        const standing = await deps.events.followedRuns(followed.map(([runId]) => runId));
        for (const [runId, tail] of followed) {
          // One run's failed read leaves the others' catch-up to this round, not the next.
          if (tails.get(runId) === tail)
            await catchUp(runId, tail, standing.get(runId)).catch((error: unknown) =>
              deps.logger.warn({ err: error, runId }, 'run event catch-up failed'),
            );
        }
      } catch (error) {
        deps.logger.warn({ err: error }, 'run event poll failed');
      }
    }
  }

  /** Hands a tail's readers what the table has beyond them, or ends them once their run ended without a terminal event. */
  async function catchUp(runId: string, tail: SharedTail, standing: { lastSeq: number; ended: boolean } | undefined) {
    const behind = Math.min(...[...tail.followers].map((each) => each.position()));
    if (standing && standing.lastSeq > behind) {
      (await deps.events.events(tail.tenantId, runId, behind)).forEach(tail.deliver);
      return;
    }
    if (standing && !standing.ended) return;
    tail.finishedAt ??= Date.now();
    if (!standing || Date.now() - tail.finishedAt > 2 * deps.pollIntervalMs) for (const each of tail.followers) each.end();
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

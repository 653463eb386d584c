import type { Caller } from '@hangar/platform';

/** An event of a run's stream: sequences arrive in increasing order (a sequence whose write failed is missing). */
export interface SequencedEvent {
  seq: number;
}

export interface RunEventHubDeps<E extends SequencedEvent> {
  /** The run executor's `StreamRunEvents`: events after `afterSeq`, history then live, until the run ends. */
  open(caller: Caller, runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<E>;
  /** How many of the latest events a shared stream keeps, at least, for readers that join late (at most twice as many). */
  keep: number;
}

/** One executor stream of a run, read by every reader of that run in this gateway. */
interface SharedStream<E> {
  /** The latest events in order (trimmed in bulk, not one by one). */
  kept: E[];
  /** Everything at or before this sequence was delivered and is no longer kept (at first: what the stream was opened after). */
  trimmedThrough: number;
  readers: Set<() => void>;
  ended: boolean;
  failure?: { error: unknown };
  stop: AbortController;
}

/**
 * `GET /api/runs/{id}/events` readers of one run in this gateway share one `StreamRunEvents` call
 * (an idle reader then costs its HTTP response and little else). The first reader opens the shared
 * stream at its own position; a reader that joins later is served from the events it kept (the
 * latest `keep`) and then live. A reader behind what is kept, or one that falls behind it, reads
 * through a call of its own from its position. The last reader to leave closes the shared call.
 */
export function createRunEventHub<E extends SequencedEvent>(deps: RunEventHubDeps<E>) {
  const streams = new Map<string, SharedStream<E>>();

  /** The index in `kept` of the first event after `position`; `kept.length` when there is none yet. */
  function nextIndex(stream: SharedStream<E>, position: number): number {
    let low = 0;
    let high = stream.kept.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (stream.kept[middle].seq <= position) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  function openShared(caller: Caller, key: string, runId: string, afterSeq: number): SharedStream<E> {
    const stream: SharedStream<E> = {
      kept: [],
      trimmedThrough: afterSeq,
      readers: new Set(),
      ended: false,
      stop: new AbortController(),
    };
    streams.set(key, stream);
    const wakeAll = () => stream.readers.forEach((wake) => wake());
    void (async () => {
      try {
        for await (const event of deps.open(caller, runId, afterSeq, stream.stop.signal)) {
          stream.kept.push(event);
          if (stream.kept.length > 2 * deps.keep) {
            const trimmed = stream.kept.splice(0, stream.kept.length - deps.keep);
            stream.trimmedThrough = trimmed.at(-1)!.seq;
          }
          wakeAll();
        }
      } catch (error) {
        stream.failure = { error };
      } finally {
        stream.ended = true;
        if (streams.get(key) === stream) streams.delete(key);
        wakeAll();
      }
    })();
    return stream;
  }

  /** Leaves the shared stream; the last reader out closes its executor call. */
  function leave(key: string, stream: SharedStream<E>, reader: () => void) {
    if (!stream.readers.delete(reader)) return;
    if (!stream.readers.size && !stream.ended) {
      stream.stop.abort();
      if (streams.get(key) === stream) streams.delete(key);
    }
  }

  /** The run's events after `afterSeq` until it ends (or `signal` aborts), shared with the run's other readers here. */
  async function* follow(caller: Caller, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<E> {
    const key = `${caller.tenantId}\u0000${runId}`;
    let stream = streams.get(key);
    // A reader whose next events may be gone from what is kept reads them through a call of its own.
    if (stream && afterSeq < stream.trimmedThrough) {
      yield* deps.open(caller, runId, afterSeq, signal);
      return;
    }
    stream ??= openShared(caller, key, runId, afterSeq);
    let position = afterSeq;
    let wake: (() => void) | undefined;
    const reader = () => wake?.();
    stream.readers.add(reader);
    signal.addEventListener('abort', reader, { once: true });
    try {
      while (!signal.aborted) {
        if (position < stream.trimmedThrough) {
          // Fell behind what the shared stream keeps: the rest comes through a call of its own.
          leave(key, stream, reader);
          yield* deps.open(caller, runId, position, signal);
          return;
        }
        const next = stream.kept[nextIndex(stream, position)];
        if (next) {
          position = next.seq;
          yield next;
          continue;
        }
        if (stream.failure) throw stream.failure.error;
        if (stream.ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', reader);
      leave(key, stream, reader);
    }
  }

  return { follow, sharedStreams: () => streams.size };
}

export type RunEventHub<E extends SequencedEvent> = ReturnType<typeof createRunEventHub<E>>;

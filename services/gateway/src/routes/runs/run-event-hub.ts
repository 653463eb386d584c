import type { Caller } from '@hangar/platform';

/** An event of a run's stream: sequences arrive in order and without gaps. */
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
  /** The latest events, contiguous, the last one being the latest delivered (trimmed in bulk, not one by one). */
  kept: E[];
  /** The sequence the stream was opened after: it delivers nothing at or before it. */
  openedAfter: number;
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

  /** Whether a reader after `afterSeq` can be served from `stream`: nothing it needs is gone from what is kept. */
  function servable(stream: SharedStream<E>, afterSeq: number): boolean {
    const firstKept = stream.kept[0]?.seq ?? Infinity;
    const latest = stream.kept.at(-1)?.seq ?? stream.openedAfter;
    return afterSeq >= stream.openedAfter && (afterSeq >= latest || afterSeq >= firstKept - 1);
  }

  function openShared(caller: Caller, key: string, runId: string, afterSeq: number): SharedStream<E> {
    const stream: SharedStream<E> = { kept: [], openedAfter: afterSeq, readers: new Set(), ended: false, stop: new AbortController() };
    streams.set(key, stream);
    const wakeAll = () => stream.readers.forEach((wake) => wake());
    void (async () => {
      try {
        for await (const event of deps.open(caller, runId, afterSeq, stream.stop.signal)) {
          stream.kept.push(event);
          if (stream.kept.length > 2 * deps.keep) stream.kept.splice(0, stream.kept.length - deps.keep);
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

  /** The run's events after `afterSeq` until it ends (or `signal` aborts), shared with the run's other readers here. */
  async function* follow(caller: Caller, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<E> {
    const key = `${caller.tenantId}\u0000${runId}`;
    let stream = streams.get(key);
    if (stream && !servable(stream, afterSeq)) {
      yield* deps.open(caller, runId, afterSeq, signal);
      return;
    }
    stream ??= openShared(caller, key, runId, afterSeq);
    let position = afterSeq;
    let wake: (() => void) | undefined;
    const reader = () => wake?.();
    const onAbort = () => wake?.();
    stream.readers.add(reader);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const firstKept = stream.kept[0]?.seq;
        const latest = stream.kept.at(-1)?.seq ?? stream.openedAfter;
        if (position < latest && firstKept !== undefined && position < firstKept - 1) {
          // Fell behind what the shared stream keeps: the rest comes through a call of its own.
          yield* deps.open(caller, runId, position, signal);
          return;
        }
        if (position < latest) {
          const next = stream.kept[position + 1 - firstKept!];
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
      signal.removeEventListener('abort', onAbort);
      stream.readers.delete(reader);
      if (!stream.readers.size && !stream.ended) {
        stream.stop.abort();
        if (streams.get(key) === stream) streams.delete(key);
      }
    }
  }

  return { follow, sharedStreams: () => streams.size };
}

export type RunEventHub<E extends SequencedEvent> = ReturnType<typeof createRunEventHub<E>>;

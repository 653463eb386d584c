/**
 * Messages pushed by any number of producers (event handlers, tasks) for one reader, in the order
 * they were pushed; `end` lets the reader finish after what is queued. Pushes after the end are
 * dropped.
 */
export function createAsyncQueue<T>() {
  const queued: T[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  return {
    push(message: T): void {
      if (ended) return;
      queued.push(message);
      wake?.();
    },
    end(): void {
      ended = true;
      wake?.();
    },
    async *drain(): AsyncGenerator<T> {
      for (;;) {
        while (queued.length) yield queued.shift()!;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
  };
}

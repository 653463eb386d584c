/**
 * A pause that ends after `ms` (never, with Infinity: no timer), on `wake()` (a pub/sub message), or
 * when `signal` aborts. Each sleep removes its abort listener when it ends, so a loop sleeping for
 * hours adds none.
 */
export function createWakeablePause() {
  let wakeSleeper: (() => void) | undefined;
  return {
    wake: () => wakeSleeper?.(),
    sleep: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const end = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', end);
          wakeSleeper = undefined;
          resolve();
        };
        const timer = ms === Infinity ? undefined : setTimeout(end, ms);
        wakeSleeper = end;
        signal.addEventListener('abort', end, { once: true });
      }),
  };
}

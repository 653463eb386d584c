import type { Logger } from '../logging.js';

export interface ClaimLoopOptions<T extends { id: string }> {
  /** What the loop claims, for its log lines ("suite runs"). */
  what: string;
  /** Leases up to `free` items for this instance (`FOR UPDATE SKIP LOCKED`); what no other instance holds. */
  claim: (free: number) => Promise<T[]>;
  /** Executes one claimed item; `stop` aborts when the loop stops (the item is to be given back). */
  execute: (item: T, stop: AbortSignal) => Promise<void>;
  /** Items executed at a time. */
  maxConcurrent: number;
  /** The longest sleep between two claims (a wake-up cuts it short). */
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * The loop of a background worker over leased work: claims what fits its free slots, executes
 * each item, claims again when a slot frees, a poll interval later, or when woken. A failed claim
 * waits for the next poll. An item claimed again while it still executes here (its lease ran out
 * meanwhile) is left to the execution going on.
 */
export function createClaimLoop<T extends { id: string }>(options: ClaimLoopOptions<T>) {
  const { logger } = options;
  const active = new Map<string, { stop: AbortController; done: Promise<void> }>();
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> | undefined;
  let stopped = true;

  async function poll(): Promise<void> {
    const free = options.maxConcurrent - active.size;
    if (stopped || free <= 0) return;
    let claimed: T[];
    try {
      claimed = await options.claim(free);
    } catch (error) {
      logger.warn({ err: error }, `${options.what} could not be claimed; trying again at the next poll`);
      return;
    }
    for (const item of claimed) {
      if (active.has(item.id)) continue;
      const stop = new AbortController();
      const done = options.execute(item, stop.signal).finally(() => {
        active.delete(item.id);
        wake(); // a slot is free
      });
      active.set(item.id, { stop, done });
    }
  }

  function schedule(delayMs: number) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      polling ??= poll().finally(() => {
        polling = undefined;
        schedule(options.pollIntervalMs);
      });
    }, delayMs);
  }

  /** Claims now rather than at the next poll. */
  function wake() {
    if (!polling) schedule(0);
  }

  return {
    wake,
    start() {
      stopped = false;
      schedule(0);
    },
    /** Stops claiming, stops what executes (with `reason`) and waits for it to be given back. */
    async stop(reason: Error) {
      stopped = true;
      clearTimeout(timer);
      await polling;
      for (const { stop } of active.values()) stop.abort(reason);
      await Promise.all([...active.values()].map(({ done }) => done));
    },
  };
}

export type ClaimLoop = ReturnType<typeof createClaimLoop>;

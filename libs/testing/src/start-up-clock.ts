/**
 * How long a test file waited for what it starts (Hangars, split shapes, private engines), for the
 * per-file table of `tools/timings-reporter.ts`: the wall time during which at least one start-up
 * was under way, so starts awaited together and starts nested in others count once.
 */
export interface StartUpTally {
  ms: number;
  count: number;
}

const TALLY = Symbol.for('hangar.testStartUps');
type Tally = StartUpTally & { active: number; since: number };
const holder = globalThis as { [TALLY]?: Tally };
const freshTally = (): Tally => ({ ms: 0, count: 0, active: 0, since: 0 });

export function startUpTally(): StartUpTally {
  const { ms, count } = holder[TALLY] ?? freshTally();
  return { ms, count };
}

/** Counts from zero: a process that runs several test files one after another (vitest's singleFork). */
export function resetStartUpTally(): void {
  holder[TALLY] = freshTally();
}

/** Runs `start`, counting its wall time towards this process's start-up tally. */
export async function timedStartUp<T>(start: () => Promise<T>): Promise<T> {
  const tally = (holder[TALLY] ??= freshTally());
  if (tally.active++ === 0) {
    tally.since = performance.now();
    tally.count += 1;
  }
  try {
    return await start();
  } finally {
    if (--tally.active === 0) tally.ms += performance.now() - tally.since;
  }
}

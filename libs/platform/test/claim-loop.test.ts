import { createClaimLoop, createLogger } from '@hangar/platform';
import { describe, expect, it } from 'vitest';

const logger = createLogger({ name: 'claim-loop-test', level: 'silent' });

/** Work items that each run until the test (or the loop's stop) ends them. */
function harness(maxConcurrent: number) {
  const queue = ['a', 'b', 'c'].map((id) => ({ id }));
  const claims: number[] = [];
  const running = new Map<string, { finish: () => void; stopReason?: unknown }>();
  const loop = createClaimLoop({
    what: 'items',
    async claim(free) {
      claims.push(free);
      return queue.splice(0, free);
    },
    execute: (item, stop) =>
      new Promise<void>((resolve) => {
        const entry = { finish: resolve, stopReason: undefined as unknown };
        running.set(item.id, entry);
        stop.addEventListener('abort', () => {
          entry.stopReason = stop.reason;
          resolve();
        });
      }),
    maxConcurrent,
    pollIntervalMs: 60_000,
    logger,
  });
  return { loop, queue, claims, running };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('claim loop', () => {
  it('claims only what fits its free slots, and claims again when one frees', async () => {
    const { loop, claims, running } = harness(2);
    loop.start();
    await settle();
    expect(claims).toEqual([2]);
    expect([...running.keys()]).toEqual(['a', 'b']);
    running.get('a')!.finish();
    await settle();
    expect(claims).toEqual([2, 1]);
    expect([...running.keys()]).toEqual(['a', 'b', 'c']);
    await loop.stop(new Error('done'));
  });

  it('leaves an item claimed again while it executes to the execution going on', async () => {
    const { loop, queue, running } = harness(3);
    loop.start();
    await settle();
    const executions = running.size;
    queue.push({ id: 'a' });
    loop.wake();
    await settle();
    expect(running.size).toBe(executions);
    await loop.stop(new Error('done'));
  });

  it('stops what executes with the reason given, waits for it, and claims nothing more', async () => {
    const { loop, claims, running, queue } = harness(1);
    loop.start();
    await settle();
    const reason = new Error('the service stops');
    await loop.stop(reason);
    expect(running.get('a')!.stopReason).toBe(reason);
    queue.push({ id: 'd' });
    loop.wake();
    await settle();
    expect(claims).toEqual([1]);
  });

  it('waits for the next poll after a claim that failed', async () => {
    let calls = 0;
    const loop = createClaimLoop({
      what: 'items',
      async claim() {
        calls += 1;
        throw new Error('store away');
      },
      execute: async () => undefined,
      maxConcurrent: 1,
      pollIntervalMs: 60_000,
      logger,
    });
    loop.start();
    await settle();
    expect(calls).toBe(1);
    await loop.stop(new Error('done'));
  });
});

import { randomBytes } from 'node:crypto';
import { TEST_REDIS_URL } from '@hangar/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createFixedWindowLimiter, type FixedWindowLimiter } from '../src/index.js';

/** The fixed-window counter, in process and on the real Redis: the same contract. */
describe.each([
  ['in process', null],
  ['Redis', TEST_REDIS_URL],
])('fixed-window limiter %s', (_, redisUrl) => {
  const limiters: FixedWindowLimiter[] = [];
  const limiter = async (limit: number, windowMs: number) => {
    const created = await createFixedWindowLimiter({ limit, windowMs, keyPrefix: `t_${randomBytes(5).toString('hex')}`, redisUrl });
    limiters.push(created);
    return created;
  };
  afterAll(async () => {
    for (const created of limiters) await created.close();
  });

  it('allows `limit` takes per key and window, counts down what remains, and refuses the next until the window ends', async () => {
    const counter = await limiter(2, 1000);
    const takes = [await counter.take('a'), await counter.take('a'), await counter.take('a')];
    expect(takes.map((take) => [take?.allowed, take?.remaining])).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(takes[2]!.resetInMs).toBeGreaterThan(0);
    expect(takes[2]!.resetInMs).toBeLessThanOrEqual(1000);
    expect((await counter.take('b'))?.allowed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, takes[2]!.resetInMs + 50));
    expect((await counter.take('a'))?.allowed).toBe(true);
  });

  it('rounds a window below a second up to one second', async () => {
    const counter = await limiter(1, 100);
    await counter.take('k');
    const refused = await counter.take('k');
    expect(refused?.allowed).toBe(false);
    expect(refused!.resetInMs).toBeGreaterThan(500);
  });
});

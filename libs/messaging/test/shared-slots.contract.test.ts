import { randomBytes } from 'node:crypto';
import { startPrivateRedis, TEST_REDIS_URL } from '@hangar/testing';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { createSharedSlots, type SharedSlots } from '../src/index.js';

const opened: SharedSlots[] = [];
afterAll(async () => {
  for (const slots of opened) await slots.close();
});
const open = async (options: { limit: number; key: string; redisUrl: string | null; leaseMs?: number }) => {
  const slots = await createSharedSlots(options);
  opened.push(slots);
  return slots;
};
const freshKey = () => `t_slots_${randomBytes(5).toString('hex')}`;

/** Slots held at once, in process and on the real Redis: the same contract. */
describe.each([
  ['in process', null],
  ['Redis', TEST_REDIS_URL],
])('shared slots %s', (_, redisUrl) => {
  it('gives `limit` slots, refuses the next at once, and gives one again once a slot is released (twice is once)', async () => {
    const slots = await open({ limit: 2, key: freshKey(), redisUrl });
    const [first, second, third] = [await slots.take(), await slots.take(), await slots.take()];
    expect([typeof first, typeof second, third]).toEqual(['function', 'function', undefined]);
    first!();
    first!();
    const again = await slots.take();
    expect(again).toBeTypeOf('function');
    expect(await slots.take()).toBeUndefined();
    second!();
    again!();
  });
});

describe('shared slots on Redis', () => {
  it('are shared by every process on the same key, and not with another key', async () => {
    const key = freshKey();
    const [one, two] = [await open({ limit: 2, key, redisUrl: TEST_REDIS_URL }), await open({ limit: 2, key, redisUrl: TEST_REDIS_URL })];
    const releases = [await one.take(), await two.take()];
    expect(releases.every((release) => typeof release === 'function')).toBe(true);
    expect(await one.take()).toBeUndefined();
    expect(await two.take()).toBeUndefined();
    const other = await open({ limit: 2, key: freshKey(), redisUrl: TEST_REDIS_URL });
    expect(await other.take()).toBeTypeOf('function');
    releases[0]!();
    await expect.poll(async () => typeof (await two.take())).toBe('function');
  });

  it('outlive a holder that stops renewing them by their lease only; a live holder keeps its slot past the lease', async () => {
    const key = freshKey();
    const leaseMs = 600;
    const live = await open({ limit: 2, key, redisUrl: TEST_REDIS_URL, leaseMs });
    expect(await live.take()).toBeTypeOf('function');
    // A holder killed while it held a slot: its member is there, nobody renews it.
    const redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
    try {
      const [seconds, micros] = await redis.time();
      await redis.zAdd(key, { score: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + leaseMs, value: 'killed-holder' });
    } finally {
      await redis.close();
    }
    expect(await live.take()).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 2));
    // The dead holder's slot is free again; the live one's, renewed, is still held.
    expect(await live.take()).toBeTypeOf('function');
    expect(await live.take()).toBeUndefined();
  });

  it('count in the process alone while Redis is down, say so, and share again once it is back', async () => {
    const engine = await startPrivateRedis();
    try {
      const errors: Error[] = [];
      const key = freshKey();
      const slots = await open({ limit: 1, key, redisUrl: engine.url });
      const other = await createSharedSlots({ limit: 1, key, redisUrl: engine.url, onError: (error) => errors.push(error) });
      opened.push(other);
      await engine.kill9();
      const release = await other.take();
      expect(release).toBeTypeOf('function');
      expect(await other.take()).toBeUndefined();
      release!();
      expect(errors.length).toBeGreaterThan(0);
      await engine.start();
      // Back (empty, as a restarted Redis without persistence is): once both have reconnected, one slot across both again.
      const redis = createClient({ url: engine.url });
      await redis.connect();
      try {
        const sharedSlotTaken = async () => {
          const release = await slots.take();
          if (release && (await redis.zCard(key)) === 1) return true;
          release?.();
          return false;
        };
        await expect.poll(sharedSlotTaken, { timeout: 10_000 }).toBe(true);
        const refusedByTheOther = async () => {
          const release = await other.take();
          release?.();
          return release === undefined;
        };
        await expect.poll(refusedByTheOther, { timeout: 10_000 }).toBe(true);
      } finally {
        await redis.close();
      }
    } finally {
      await engine.stop();
    }
  }, 30_000);
});

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
    // Renewed every second: a stall of the loaded CI machine shorter than two seconds does not lose the live slot.
    const leaseMs = 3000;
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
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 1000));
    // The dead holder's slot is free again; the live one's, renewed, is still held.
    expect(await live.take()).toBeTypeOf('function');
    expect(await live.take()).toBeUndefined();
  });

  it('count in the process alone while Redis is down, say so, and count a slot held through a restart again', async () => {
    const engine = await startPrivateRedis();
    try {
      const errors: Error[] = [];
      const key = freshKey();
      // Renewed every 300 ms, so its held slot is back in Redis soon after Redis is.
      const holder = await open({ limit: 1, key, redisUrl: engine.url, leaseMs: 900 });
      const other = await createSharedSlots({ limit: 1, key, redisUrl: engine.url, onError: (error) => errors.push(error) });
      opened.push(other);
      const held = await holder.take();
      expect(held).toBeTypeOf('function');
      expect(await other.take()).toBeUndefined();

      await engine.kill9();
      const local = await other.take();
      expect(local).toBeTypeOf('function');
      expect(await other.take()).toBeUndefined();
      local!();
      expect(errors.length).toBeGreaterThan(0);

      // Restarted empty, as a Redis without persistence is: the holder's renewal puts its slot back.
      await engine.start();
      const redis = createClient({ url: engine.url });
      await redis.connect();
      try {
        await expect.poll(() => redis.zCard(key), { timeout: 10_000 }).toBe(1);
        const refusedByTheOther = async () => {
          const release = await other.take();
          release?.();
          return release === undefined;
        };
        await expect.poll(refusedByTheOther, { timeout: 10_000 }).toBe(true);
        held!();
        await expect.poll(() => redis.zCard(key), { timeout: 5_000 }).toBe(0);
        expect(await other.take()).toBeTypeOf('function');
      } finally {
        await redis.close();
      }
    } finally {
      await engine.stop();
    }
  }, 30_000);
});

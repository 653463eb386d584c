import { describe, expect, it } from 'vitest';
import { createAnnouncedCache, createInProcessPubSub } from '../src/index.js';

const CHANNEL = 'test.changed';

function setUp(ttlMs = 60_000) {
  const pubsub = createInProcessPubSub();
  const cache = createAnnouncedCache<number>({ pubsub, channel: CHANNEL, ttlMs, maxEntries: 2, onUnheard: () => {} });
  let loads = 0;
  const load = (value: number) => async () => {
    loads += 1;
    return value;
  };
  const announce = (id: string) => pubsub.publish(CHANNEL, JSON.stringify({ id }));
  return { cache, load, announce, loads: () => loads };
}

describe('a cache dropped by announcements', () => {
  it('keeps a value for its TTL, and loads it again once a change of its key is announced', async () => {
    const { cache, load, announce, loads } = setUp();
    await cache.start();
    expect(await cache.get('a', load(1))).toBe(1);
    expect(await cache.get('a', load(2))).toBe(1);
    await announce('b');
    expect(await cache.get('a', load(2))).toBe(1);
    await announce('a');
    expect(await cache.get('a', load(3))).toBe(3);
    expect(loads()).toBe(2);
    await cache.stop();
  });

  it('forgets a key at once for the process that changed it, without waiting for its announcement', async () => {
    const { cache, load, loads } = setUp();
    // Not listening at all: only `forget` can make the value stale before its TTL.
    expect(await cache.get('a', load(1))).toBe(1);
    cache.forget('b');
    expect(await cache.get('a', load(2))).toBe(1);
    cache.forget('a');
    expect(await cache.get('a', load(3))).toBe(3);
    // A lookup under way when the key was forgotten is answered but not kept.
    cache.forget('a');
    const overlapped = cache.get('a', load(4));
    cache.forget('a');
    expect(await overlapped).toBe(4);
    expect(await cache.get('a', load(5))).toBe(5);
    expect(loads()).toBe(4);
  });

  it('keeps only the values its `keep` accepts', async () => {
    const pubsub = createInProcessPubSub();
    const cache = createAnnouncedCache<number>({
      pubsub,
      channel: CHANNEL,
      ttlMs: 60_000,
      maxEntries: 10,
      onUnheard: () => {},
      keep: (value) => value !== 0,
    });
    expect(await cache.get('kept', async () => 1)).toBe(1);
    expect(await cache.get('kept', async () => 2)).toBe(1);
    expect(await cache.get('per-asker', async () => 0)).toBe(0);
    expect(await cache.get('per-asker', async () => 3)).toBe(3);
  });

  it('answers but does not keep a lookup that an announcement overlapped', async () => {
    const { cache, announce } = setUp();
    await cache.start();
    let release!: () => void;
    const slow = cache.get('a', () => new Promise<number>((resolve) => (release = () => resolve(1))));
    await announce('a');
    release();
    expect(await slow).toBe(1);
    expect(await cache.get('a', async () => 2)).toBe(2);
    await cache.stop();
  });

  it('lets the last value stand when a load fails (telling onStale), and throws when none is known', async () => {
    const { cache } = setUp(0);
    const down = async () => {
      throw new Error('governance unavailable');
    };
    await expect(cache.get('a', down)).rejects.toThrow('governance unavailable');
    expect(await cache.get('a', async () => 7)).toBe(7);
    const told: unknown[] = [];
    expect(await cache.get('a', down, (error) => told.push(error))).toBe(7);
    expect(told).toHaveLength(1);
  });

  it('shares one lookup among concurrent askers of a key', async () => {
    const { cache, load, loads } = setUp();
    expect(await Promise.all([cache.get('a', load(1)), cache.get('a', load(2)), cache.get('a', load(3))])).toEqual([1, 1, 1]);
    expect(loads()).toBe(1);
  });

  it('keeps a value an announcement made stale as the fallback when the next lookup fails', async () => {
    const { cache, load, announce } = setUp();
    await cache.start();
    await cache.get('a', load(1));
    await announce('a');
    const down = async () => {
      throw new Error('governance unavailable');
    };
    expect(await cache.get('a', down)).toBe(1);
    expect(await cache.get('a', load(2))).toBe(2);
    await cache.stop();
  });

  it('keeps at most maxEntries values, forgetting the oldest', async () => {
    const { cache, load, loads } = setUp();
    await cache.get('a', load(1));
    await cache.get('b', load(2));
    await cache.get('c', load(3));
    await cache.get('a', load(1));
    expect(loads()).toBe(4);
  });
});

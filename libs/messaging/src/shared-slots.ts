import { randomUUID } from 'node:crypto';
import { closeRedisClient, connectCommandClient } from './redis.js';

/**
 * At most `limit` slots held at once: across every process sharing one Redis when a URL is given,
 * in this process otherwise. A slot is refused at once when all are held (no queue).
 */
export interface SharedSlots {
  /** A slot's release (idempotent), or undefined when `limit` are held already. */
  take(): Promise<(() => void) | undefined>;
  close(): Promise<void>;
}

export interface SharedSlotsOptions {
  limit: number;
  /** The Redis key holding the slots: processes with the same key share them. */
  key: string;
  redisUrl?: string | null;
  /**
   * How long a slot outlives a holder that stopped renewing it (a process killed while it held
   * one); a live holder renews its slots every third of it.
   */
  leaseMs?: number;
  /** Redis could not be reached: the take was counted in this process alone. */
  onError?: (error: Error) => void;
}

/**
 * One sorted set per key: a member per held slot, scored by when its lease ends, on Redis's clock.
 * A take drops ended leases and adds one while fewer than the limit are left, in one script. A
 * renewal adds the holder's slots back if they are gone (Redis restarted empty, or an outage
 * outlasted their lease): what is with the provider still counts.
 */
const TAKE = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const RENEW = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0`;

function localSlots(limit: number) {
  let held = 0;
  return {
    take(): (() => void) | undefined {
      if (held >= limit) return undefined;
      held += 1;
      let released = false;
      return () => {
        if (!released) held -= 1;
        released = true;
      };
    },
  };
}

export async function createSharedSlots(options: SharedSlotsOptions): Promise<SharedSlots> {
  // While Redis is away, each process counts its own: the route keeps serving at the per-process bound.
  const local = localSlots(options.limit);
  if (!options.redisUrl) return { take: async () => local.take(), close: async () => {} };
  const leaseMs = options.leaseMs ?? 30_000;
  const client = await connectCommandClient(options.redisUrl, options.onError);
  const held = new Set<string>();
  const renewal = setInterval(() => {
    if (!held.size || !client.isReady) return;
    client.eval(RENEW, { keys: [options.key], arguments: [String(leaseMs), ...held] }).catch((error: Error) => options.onError?.(error));
  }, leaseMs / 3);
  renewal.unref();
  return {
    async take() {
      const id = randomUUID();
      let taken: unknown;
      try {
        taken = await client.eval(TAKE, { keys: [options.key], arguments: [String(options.limit), String(leaseMs), id] });
      } catch (error) {
        options.onError?.(error as Error);
        return local.take();
      }
      if (taken !== 1) return undefined;
      held.add(id);
      return () => {
        if (!held.delete(id)) return;
        client.zRem(options.key, id).catch((error: Error) => options.onError?.(error));
      };
    },
    async close() {
      clearInterval(renewal);
      if (held.size) await client.zRem(options.key, [...held]).catch(() => {});
      held.clear();
      await closeRedisClient(client);
    },
  };
}

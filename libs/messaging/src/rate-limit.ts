import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { closeRedisClient, connectCommandClient } from './redis.js';

export interface WindowTake {
  allowed: boolean;
  /** Requests left in the current window. */
  remaining: number;
  /** Milliseconds until the window ends. */
  resetInMs: number;
}

/**
 * Fixed windows of `limit` requests per key (rate-limiter-flexible): counted in Redis when a URL is
 * given, so every gateway shares one counter per key, in this process otherwise. A window starts
 * at its key's first request and lasts `windowMs`, in whole seconds (Redis expiry granularity).
 */
export interface FixedWindowLimiter {
  /** Counts one request of `key`; undefined when the counter cannot be reached (the caller decides). */
  take(key: string): Promise<WindowTake | undefined>;
  close(): Promise<void>;
}

export async function createFixedWindowLimiter(options: {
  limit: number;
  windowMs: number;
  keyPrefix: string;
  redisUrl?: string | null;
  onError?: (error: Error) => void;
}): Promise<FixedWindowLimiter> {
  const duration = Math.max(1, Math.ceil(options.windowMs / 1000));
  let limiter: RateLimiterAbstract;
  let close = async () => {};
  if (options.redisUrl) {
    // Takes fail while Redis is away.
    const client = await connectCommandClient(options.redisUrl, options.onError);
    limiter = new RateLimiterRedis({
      storeClient: client,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      points: options.limit,
      duration,
      keyPrefix: options.keyPrefix,
    });
    close = () => closeRedisClient(client);
  } else {
    limiter = new RateLimiterMemory({ points: options.limit, duration, keyPrefix: options.keyPrefix });
  }
  return {
    async take(key) {
      try {
        const taken = await limiter.consume(key);
        return { allowed: true, remaining: taken.remainingPoints, resetInMs: taken.msBeforeNext };
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return { allowed: false, remaining: 0, resetInMs: refusal.msBeforeNext };
        options.onError?.(refusal as Error);
        return undefined;
      }
    },
    close: () => close(),
  };
}

import type { Request, Response } from 'express';
import { createFixedWindowLimiter, type FixedWindowLimiter, type WindowTake } from '@hangar/messaging';
import { HangarError, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { Principal } from './auth.js';

export interface RateLimit {
  /** Counts the request in its partition's window, sets the RateLimit-* headers, waits in the queue or refuses with 429. */
  admit(request: Request, response: Response, principal: Principal | undefined, caller: Caller): Promise<void>;
  close(): Promise<void>;
}

/**
 * RateLimit:* (API.md "Rate limiting"): fixed windows of PermitLimit requests per Window per
 * partition, shared by every gateway through Redis when it is configured. Up to QueueLimit
 * requests of a partition over its limit wait for the next window (in this gateway) instead of
 * failing. A counter that cannot be reached lets the request through, with a warning: an outage of
 * the limiter must not become an outage of the API.
 */
export async function createRateLimit(config: HangarConfig, logger: Logger): Promise<RateLimit | undefined> {
  const settings = config.RateLimit;
  if (!settings.Enabled) return undefined;
  const limiter: FixedWindowLimiter = await createFixedWindowLimiter({
    limit: settings.PermitLimit,
    windowMs: settings.Window,
    keyPrefix: `${config.Redis.ChannelPrefix}hangar:rate:${settings.Partition}`,
    redisUrl: config.Redis.ConnectionString,
    onError: (error) => logger.warn({ err: error }, 'rate-limit counter unavailable; requests pass uncounted'),
  });
  const waiting = new Map<string, number>();

  const partitionOf = (request: Request, principal: Principal | undefined, caller: Caller): string => {
    switch (settings.Partition) {
      case 'Tenant':
        return caller.tenantId;
      case 'User':
        return `${caller.tenantId}/${caller.userId ?? caller.actor}`;
      case 'ApiKey':
        return principal?.method === 'apiKey' ? principal.actor : `${caller.tenantId}/${caller.actor}`;
      case 'RemoteAddress':
        return request.socket.remoteAddress ?? 'unknown';
    }
  };

  async function takeOrWait(key: string): Promise<WindowTake | undefined> {
    let taken = await limiter.take(key);
    if (!taken || taken.allowed || (waiting.get(key) ?? 0) >= settings.QueueLimit) return taken;
    waiting.set(key, (waiting.get(key) ?? 0) + 1);
    try {
      while (taken && !taken.allowed) {
        await new Promise((resolve) => setTimeout(resolve, taken!.resetInMs + 5));
        taken = await limiter.take(key);
      }
      return taken;
    } finally {
      const left = waiting.get(key)! - 1;
      if (left) waiting.set(key, left);
      else waiting.delete(key);
    }
  }

  return {
    async admit(request, response, principal, caller) {
      const taken = await takeOrWait(partitionOf(request, principal, caller));
      if (!taken) return;
      const resetSeconds = Math.max(1, Math.ceil(taken.resetInMs / 1000));
      response.set({
        'RateLimit-Limit': String(settings.PermitLimit),
        'RateLimit-Remaining': String(taken.remaining),
        'RateLimit-Reset': String(resetSeconds),
      });
      if (!taken.allowed) {
        throw new HangarError(
          'tooManyRequests',
          `more than ${settings.PermitLimit} requests in ${settings.Window} ms for this ${settings.Partition.toLowerCase()} (RateLimit)`,
          { resetsAt: new Date(Date.now() + taken.resetInMs).toISOString() },
          'rate_limited',
        );
      }
    },
    close: () => limiter.close(),
  };
}

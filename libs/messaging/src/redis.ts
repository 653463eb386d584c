import { createClient } from 'redis';
import { EngineUnavailableError, type PubSub, type PubSubHandler } from './ports.js';

export interface RedisPubSubOptions {
  url: string;
  /** Prepended to every channel so several deployments (or test runs) can share one Redis. */
  channelPrefix?: string;
  onError?: (error: Error) => void;
  /** How long the first connection may take; a server not there at start is a start-up error. */
  connectTimeoutMs?: number;
  /** How long a publish or subscribe may wait for Redis's answer before it fails. */
  commandTimeoutMs?: number;
}

/**
 * Redis pub/sub: one connection publishes, a dedicated one subscribes (a subscribed Redis
 * connection can do nothing else). Redis drops what nobody listens to, as the port allows.
 *
 * Once started it outlives Redis outages: both connections reconnect with a capped backoff, and
 * the client subscribes its channels again on the new connection. While Redis is away, publish
 * and subscribe reject at once with {@link EngineUnavailableError} (nothing is queued for later:
 * a wake-up delivered minutes late is worse than none), and the caller decides what that means.
 */
export async function createRedisPubSub(options: RedisPubSubOptions): Promise<PubSub> {
  const prefix = options.channelPrefix ?? '';
  const onError = options.onError ?? (() => {});
  let connected = false;
  const publisher = createClient({
    url: options.url,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? 5000 },
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 5000,
      // Fail the start at once; once running, ride out a Redis restart with a capped backoff.
      reconnectStrategy: (retries, cause) => (connected ? Math.min(100 * 2 ** retries, 2000) : cause),
    },
  });
  // An 'error' event nobody listens to ends the process; each connection reports its trouble here.
  publisher.on('error', onError);
  const subscriber = publisher.duplicate();
  subscriber.on('error', onError);
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
  } catch (error) {
    publisher.destroy();
    subscriber.destroy();
    throw new Error(`Redis at ${redactUrl(options.url)} is not reachable: ${(error as Error).message}`);
  }
  connected = true;

  const unavailable = (what: string, cause?: unknown) =>
    new EngineUnavailableError(`Redis is unavailable: ${what}${cause ? ` (${(cause as Error).message})` : ''}`, { cause });

  /**
   * Handlers by prefixed channel. The client holds one listener per channel (`deliver`), so an
   * unsubscribe while Redis is away takes effect here at once; Redis hears of it once it is back.
   */
  const channels = new Map<string, { handlers: Set<PubSubHandler>; subscribed: Promise<void> }>();
  /** Channels to drop from Redis when it is reachable again (left while it was away). */
  const abandoned = new Set<string>();
  const deliver = (message: string, channel: string) => {
    for (const handler of channels.get(channel)?.handlers ?? []) {
      try {
        handler(message);
      } catch {
        // one listener's failure must not starve the others
      }
    }
  };
  const dropFromRedis = async (channel: string) => {
    if (!subscriber.isReady) {
      abandoned.add(channel);
      return;
    }
    await subscriber.unsubscribe(channel, deliver).catch(() => abandoned.add(channel));
  };
  subscriber.on('ready', () => {
    for (const channel of abandoned) {
      abandoned.delete(channel);
      if (!channels.has(channel)) void dropFromRedis(channel);
    }
  });

  return {
    kind: 'redis',
    async publish(channel, message) {
      try {
        await publisher.publish(prefix + channel, message);
      } catch (error) {
        throw unavailable(`publish to ${channel} failed`, error);
      }
    },
    async subscribe(channel, handler: PubSubHandler) {
      const name = prefix + channel;
      let entry = channels.get(name);
      if (!entry) {
        // SUBSCRIBE is not refused while offline but waits for the reconnect: refuse it here instead.
        if (!subscriber.isReady) throw unavailable(`cannot subscribe to ${channel}`);
        abandoned.delete(name);
        const subscribed = withTimeout(subscriber.subscribe(name, deliver), options.commandTimeoutMs ?? 5000);
        entry = { handlers: new Set(), subscribed };
        channels.set(name, entry);
        subscribed.catch(() => {
          if (channels.get(name)?.subscribed === subscribed) channels.delete(name);
          abandoned.add(name);
        });
      }
      try {
        await entry.subscribed;
      } catch (error) {
        throw unavailable(`cannot subscribe to ${channel}`, error);
      }
      const handlers = entry.handlers;
      handlers.add(handler);
      return {
        async unsubscribe() {
          if (!handlers.delete(handler) || handlers.size || channels.get(name)?.handlers !== handlers) return;
          channels.delete(name);
          await dropFromRedis(name);
        },
      };
    },
    async close() {
      await Promise.all([subscriber, publisher].map(closeRedisClient));
    },
  };
}

/**
 * A connected node-redis client for short commands (counters, slots): a server not there at start
 * fails the start; once connected it rides out outages, every command failing at once meanwhile
 * (nothing queued), each trouble reported to `onError` so that none ends the process.
 */
export async function connectCommandClient(url: string, onError?: (error: Error) => void) {
  let connected = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: 2000 },
    socket: { connectTimeout: 5000, reconnectStrategy: (retries, cause) => (connected ? Math.min(100 * 2 ** retries, 2000) : cause) },
  });
  client.on('error', (error: Error) => onError?.(error));
  await client.connect();
  connected = true;
  return client;
}

/** Closes a node-redis client: gracefully when Redis answers, at once when it is away (close() waits for pending commands, which never finish then). */
export const closeRedisClient = (client: { close(): Promise<unknown>; destroy(): void }) =>
  withTimeout(client.close(), 1000).then(
    () => undefined,
    () => client.destroy(),
  );

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}

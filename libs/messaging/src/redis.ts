import { createClient } from 'redis';
import type { PubSub, PubSubHandler } from './ports.js';

export interface RedisPubSubOptions {
  url: string;
  /** Prepended to every channel so several deployments (or test runs) can share one Redis. */
  channelPrefix?: string;
  onError?: (error: Error) => void;
  /** How long the first connection may take; a server not there at start is a start-up error. */
  connectTimeoutMs?: number;
}

/**
 * Redis pub/sub: one connection publishes, a dedicated one subscribes (a subscribed Redis
 * connection can do nothing else). Redis drops what nobody listens to, as the port allows.
 */
export async function createRedisPubSub(options: RedisPubSubOptions): Promise<PubSub> {
  const prefix = options.channelPrefix ?? '';
  const onError = options.onError ?? (() => {});
  let connected = false;
  const publisher = createClient({
    url: options.url,
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 5000,
      // Fail the start at once; once running, ride out a Redis restart with a capped backoff.
      reconnectStrategy: (retries, cause) => (connected ? Math.min(100 * 2 ** retries, 2000) : cause),
    },
  });
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

  return {
    kind: 'redis',
    async publish(channel, message) {
      await publisher.publish(prefix + channel, message);
    },
    async subscribe(channel, handler: PubSubHandler) {
      // A throwing handler must not reach the client's reader loop and stop other channels.
      const listener = (message: string) => {
        try {
          handler(message);
        } catch {
          // one listener's failure must not starve the others
        }
      };
      await subscriber.subscribe(prefix + channel, listener);
      return {
        async unsubscribe() {
          if (subscriber.isOpen) await subscriber.unsubscribe(prefix + channel, listener);
        },
      };
    },
    async close() {
      await Promise.allSettled([subscriber.close(), publisher.close()]);
    },
  };
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

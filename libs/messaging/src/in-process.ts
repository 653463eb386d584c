import type { EventLog, LogHandler, LogRecord, PubSub, PubSubHandler, Subscription } from './ports.js';

const RETRY_DELAY_MS = 50;

/** The all-in-one event log: an in-memory append-only list per topic with per-group positions. */
export function createInProcessEventLog(): EventLog {
  const topics = new Map<string, LogRecord[]>();
  const positions = new Map<string, number>();
  const consumers = new Set<{ topic: string; group: string; handler: LogHandler; wake: () => void; stopped: boolean }>();
  let closed = false;

  const log = (topic: string) => {
    let records = topics.get(topic);
    if (!records) topics.set(topic, (records = []));
    return records;
  };

  async function consume(consumer: { topic: string; group: string; handler: LogHandler; stopped: boolean; wake: () => void }) {
    const positionKey = `${consumer.topic}\u0000${consumer.group}`;
    while (!consumer.stopped) {
      const records = log(consumer.topic);
      const position = positions.get(positionKey) ?? 0;
      if (position >= records.length) {
        await new Promise<void>((resolve) => (consumer.wake = resolve));
        continue;
      }
      try {
        await consumer.handler(records[position]);
        positions.set(positionKey, position + 1);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
  }

  return {
    kind: 'memory',
    async append(topic, batch) {
      if (closed) throw new Error('event log is closed');
      const records = log(topic);
      for (const { key, value } of batch) {
        records.push({ topic, key, value, offset: records.length, timestamp: Date.now() });
      }
      for (const consumer of consumers) if (consumer.topic === topic) consumer.wake();
    },
    async subscribe(topic, group, handler): Promise<Subscription> {
      const consumer = { topic, group, handler, stopped: false, wake: () => {} };
      consumers.add(consumer);
      void consume(consumer);
      return {
        async unsubscribe() {
          consumer.stopped = true;
          consumer.wake();
          consumers.delete(consumer);
        },
      };
    },
    async close() {
      closed = true;
      for (const consumer of consumers) {
        consumer.stopped = true;
        consumer.wake();
      }
      consumers.clear();
    },
  };
}

/** The all-in-one pub/sub: synchronous fan-out to the handlers subscribed at publish time. */
export function createInProcessPubSub(): PubSub {
  const channels = new Map<string, Set<PubSubHandler>>();
  return {
    kind: 'memory',
    async publish(channel, message) {
      for (const handler of [...(channels.get(channel) ?? [])]) {
        try {
          handler(message);
        } catch {
          // one listener's failure must not starve the others
        }
      }
    },
    async subscribe(channel, handler) {
      let handlers = channels.get(channel);
      if (!handlers) channels.set(channel, (handlers = new Set()));
      handlers.add(handler);
      return {
        async unsubscribe() {
          handlers!.delete(handler);
          if (handlers!.size === 0) channels.delete(channel);
        },
      };
    },
    async close() {
      channels.clear();
    },
  };
}

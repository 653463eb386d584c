import type { EventLog, LogBatchHandler, LogRecord, PubSub, PubSubHandler, Subscription } from './ports.js';

const RETRY_DELAY_MS = 50;

interface Consumer {
  topic: string;
  group: string;
  handler: LogBatchHandler;
  maxRecords: number;
  stopped: boolean;
  wake: () => void;
}

/**
 * The all-in-one event log: an in-memory list per topic with per-group positions. It keeps the
 * last `retainedPerTopic` records of a topic (a group that falls further behind skips ahead), so a
 * long-running process does not grow without bound.
 */
export function createInProcessEventLog(options: { retainedPerTopic?: number } = {}): EventLog {
  const retained = options.retainedPerTopic ?? 10_000;
  const topics = new Map<string, { records: LogRecord[]; dropped: number }>();
  const positions = new Map<string, number>();
  const consumers = new Set<Consumer>();
  let closed = false;

  const log = (topic: string) => {
    let entry = topics.get(topic);
    if (!entry) topics.set(topic, (entry = { records: [], dropped: 0 }));
    return entry;
  };

  async function consume(consumer: Consumer) {
    const positionKey = `${consumer.topic}\u0000${consumer.group}`;
    while (!consumer.stopped) {
      const { records, dropped } = log(consumer.topic);
      const position = Math.max(positions.get(positionKey) ?? 0, dropped);
      if (position >= dropped + records.length) {
        await new Promise<void>((resolve) => (consumer.wake = resolve));
        continue;
      }
      const batch = records.slice(position - dropped, position - dropped + consumer.maxRecords);
      try {
        await consumer.handler(batch);
        positions.set(positionKey, position + batch.length);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
  }

  function start(topicOrTopics: string | string[], group: string, handler: LogBatchHandler, maxRecords: number): Subscription {
    // Each topic keeps its own position; records of different topics have no order between them.
    const started = [topicOrTopics].flat().map((topic) => {
      const consumer: Consumer = { topic, group, handler, maxRecords, stopped: false, wake: () => {} };
      consumers.add(consumer);
      void consume(consumer);
      return consumer;
    });
    return {
      async unsubscribe() {
        for (const consumer of started) {
          consumer.stopped = true;
          consumer.wake();
          consumers.delete(consumer);
        }
      },
    };
  }

  return {
    kind: 'memory',
    async append(topic, batch) {
      if (closed) throw new Error('event log is closed');
      const entry = log(topic);
      for (const { key, value, traceparent } of batch) {
        const offset = entry.dropped + entry.records.length;
        entry.records.push({ topic, key, value, offset, timestamp: Date.now(), ...(traceparent && { traceparent }) });
      }
      const excess = entry.records.length - retained;
      if (excess > 0) {
        entry.records.splice(0, excess);
        entry.dropped += excess;
      }
      for (const consumer of consumers) if (consumer.topic === topic) consumer.wake();
    },
    async subscribe(topics, group, handler) {
      return start(topics, group, ([record]) => handler(record), 1);
    },
    async subscribeBatches(topics, group, handler, { maxRecords }) {
      return start(topics, group, handler, maxRecords);
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

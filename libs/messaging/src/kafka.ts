import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import { stopKafkajsIdleLoop } from './kafkajs-idle-loop.js';
import type { EventLog, LogBatchHandler, LogRecord } from './ports.js';

export interface KafkaEventLogOptions {
  brokers: string[];
  clientId: string;
  /** Prepended to every topic and consumer group, so deployments or test runs can share a cluster. */
  prefix?: string;
  onError?: (error: Error) => void;
}

const RETRY_DELAY_MS = 50;
const MAX_RETRY_DELAY_MS = 2000;
/** The broker's group.min.session.timeout.ms is 6 s by default. */
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 1_000;
const TOPIC_READY_TIMEOUT_MS = 30_000;

/**
 * The event log on Apache Kafka (kafkajs). The producer is idempotent and waits for every in-sync
 * replica; a record's key picks its partition, so records with one key keep their order. A
 * consumer group starts from the earliest record; a handler that throws gets the same records again
 * (after a growing pause) before the group moves on, so delivery is at-least-once and in order.
 */
export async function createKafkaEventLog(options: KafkaEventLogOptions): Promise<EventLog> {
  stopKafkajsIdleLoop();
  const prefix = options.prefix ?? '';
  const onError = options.onError ?? (() => {});
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
  const admin = kafka.admin();
  try {
    await Promise.all([producer.connect(), admin.connect()]);
  } catch (error) {
    await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    throw new Error(`Kafka at ${options.brokers.join(',')} is not reachable: ${(error as Error).message}`);
  }
  const consumers = new Map<Consumer, { stopped: boolean }>();
  let closed = false;
  const topics = new Map<string, Promise<unknown>>();
  // A topic is created (with the broker's partition count) and has leaders before it is used:
  // a consumer that subscribes to a topic the broker is still creating fails.
  const ensureTopic = (topic: string) => {
    let created = topics.get(topic);
    if (!created) {
      created = admin.createTopics({ topics: [{ topic }], waitForLeaders: false }).then(() => untilTopicHasLeaders(admin, topic));
      created.catch(() => topics.delete(topic));
      topics.set(topic, created);
    }
    return created;
  };

  async function start(topicOrTopics: string | string[], group: string, handler: LogBatchHandler, maxRecords: number) {
    const names = [topicOrTopics].flat();
    // A short fetch wait keeps delivery latency low when the topic is quiet; a member that died
    // (SIGKILL, no leave) holds its partitions until its session times out, so keep that short.
    const consumer = kafka.consumer({
      groupId: prefix + group,
      allowAutoTopicCreation: true,
      maxWaitTimeInMs: 250,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: HEARTBEAT_INTERVAL_MS,
    });
    const state = { stopped: false };
    consumers.set(consumer, state);
    await Promise.all(names.map((topic) => ensureTopic(prefix + topic)));
    await consumer.connect();
    await consumer.subscribe({ topics: names.map((topic) => prefix + topic), fromBeginning: true });

    /** Hands `records` over until the handler takes them (after a growing pause each time it throws). */
    async function handOver(records: LogRecord[], heartbeat: () => Promise<void>) {
      for (let delay = RETRY_DELAY_MS; !state.stopped; delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS)) {
        try {
          return await handler(records);
        } catch (error) {
          onError(error as Error);
          await new Promise((resolve) => setTimeout(resolve, delay));
          // kafkajs beats only when told to: records retried for long would cost this member its partitions.
          await heartbeat().catch(() => {});
        }
      }
      // Stopping while the records still fail: their offsets must not be committed as if they were handled.
      throw new Error('the consumer stopped before these records were handled');
    }

    // Not awaited: joining waits for the group to rebalance (up to a dead member's session timeout),
    // and a process must not stay unready for it. Records flow once partitions are assigned.
    const running = consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const topic = batch.topic.slice(prefix.length);
        for (let first = 0; first < batch.messages.length; first += maxRecords) {
          if (!isRunning() || isStale()) return;
          const messages = batch.messages.slice(first, first + maxRecords);
          await handOver(
            messages.map((message) => ({
              topic,
              key: message.key?.toString() ?? '',
              value: message.value?.toString() ?? '',
              offset: Number(message.offset),
              timestamp: Number(message.timestamp),
              ...(message.headers?.traceparent && { traceparent: message.headers.traceparent.toString() }),
            })),
            heartbeat,
          );
          resolveOffset(messages[messages.length - 1].offset);
          await heartbeat();
        }
      },
    });
    running.catch((error: Error) => onError(error));
    return {
      async unsubscribe() {
        state.stopped = true;
        consumers.delete(consumer);
        await consumer.disconnect();
      },
    };
  }

  return {
    kind: 'kafka',
    async append(topic, records) {
      if (closed) throw new Error('event log is closed');
      await ensureTopic(prefix + topic);
      const messages = records.map(({ key, value, traceparent }) => ({ key, value, ...(traceparent && { headers: { traceparent } }) }));
      await producer.send({ topic: prefix + topic, acks: -1, messages });
    },
    async subscribe(topicOrTopics, group, handler) {
      return start(topicOrTopics, group, ([record]) => handler(record), 1);
    },
    async subscribeBatches(topicOrTopics, group, handler, { maxRecords }) {
      return start(topicOrTopics, group, handler, maxRecords);
    },
    async close() {
      closed = true;
      for (const state of consumers.values()) state.stopped = true;
      await Promise.allSettled([...consumers.keys()].map((consumer) => consumer.disconnect()));
      consumers.clear();
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    },
  };
}

/**
 * Until the broker lists `topic` with a leader for every partition. Not createTopics' own (default)
 * `waitForLeaders`: a broker that has just started may not list a topic it has just created
 * (UNKNOWN_TOPIC_OR_PARTITION), and that wait gives up at once, failing the process's start.
 */
async function untilTopicHasLeaders(admin: Admin, topic: string) {
  const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
      if (metadata.partitions.every((partition) => partition.leader >= 0)) return;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw lastError ?? new Error(`Kafka topic ${topic} has no leader for every partition after ${TOPIC_READY_TIMEOUT_MS / 1000} s`);
}

/** A message on a durable, ordered log (Kafka in the distributed shape). */
export interface LogRecord {
  topic: string;
  /** Records with the same key keep their order (Kafka partition key). */
  key: string;
  value: string;
  offset: number;
  timestamp: number;
  /** The W3C trace context the record was appended under (a Kafka header), so a consumer's work joins its trace. */
  traceparent?: string;
}

/** What `append` takes: a record before the log gave it an offset. */
export type NewLogRecord = Pick<LogRecord, 'key' | 'value' | 'traceparent'>;

export type LogHandler = (record: LogRecord) => Promise<void>;

/** Records of one topic, consecutive and in log order (in Kafka, of one partition). */
export type LogBatchHandler = (records: LogRecord[]) => Promise<void>;

/**
 * Durable event log. Every consumer group sees every record of a topic once, in order per key;
 * a handler that throws gets the record again (at-least-once), so consumers must be idempotent.
 */
export interface EventLog {
  readonly kind: string;
  append(topic: string, records: NewLogRecord[]): Promise<void>;
  /**
   * Starts consuming from the group's committed position; resolves once subscribed (records flow as
   * soon as the group has given this member its share, which may take a rebalance). A group
   * reading several topics names them all in one call (`record.topic` tells them apart): Kafka
   * assigns a group's partitions among members as if all subscribed alike.
   */
  subscribe(topics: string | string[], group: string, handler: LogHandler): Promise<Subscription>;
  /**
   * As `subscribe`, but hands over the records that are waiting, up to `maxRecords` at a time, so
   * a consumer can handle them with one statement. A handler that throws gets the same batch again.
   */
  subscribeBatches(
    topics: string | string[],
    group: string,
    handler: LogBatchHandler,
    options: { maxRecords: number },
  ): Promise<Subscription>;
  close(): Promise<void>;
}

export type PubSubHandler = (message: string) => void;

/** Fire-and-forget fan-out to whoever listens now (Redis pub/sub in the distributed shape). */
export interface PubSub {
  readonly kind: string;
  publish(channel: string, message: string): Promise<void>;
  /** Its subscription's `unsubscribe` never rejects: leaving takes effect here at once, even while the engine is away. */
  subscribe(channel: string, handler: PubSubHandler): Promise<Subscription>;
  close(): Promise<void>;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

/**
 * The engine behind a port (Redis, a broker) cannot be reached now; the same call may succeed
 * once it is back. Adapters reject with it so callers can tell an outage from a bug.
 */
export class EngineUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EngineUnavailableError';
  }
}

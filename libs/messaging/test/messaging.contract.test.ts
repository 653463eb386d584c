import { randomBytes } from 'node:crypto';
import {
  createInProcessEventLog,
  createInProcessPubSub,
  createKafkaEventLog,
  createRedisPubSub,
  EngineUnavailableError,
  type EventLog,
  type LogRecord,
  type PubSub,
} from '@hangar/messaging';
import { startPrivateRedis, TEST_KAFKA_BROKERS, TEST_REDIS_URL } from '@hangar/testing';
import { describe, expect, it } from 'vitest';

/** The port contracts, run against the in-process adapters and the real engines behind the others. */

// A Kafka consumer group needs a few seconds to join.
const waitFor = async (condition: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

const kafkaEventLog = () =>
  createKafkaEventLog({ brokers: TEST_KAFKA_BROKERS, clientId: 'hangar-contract', prefix: `t_${randomBytes(5).toString('hex')}.` });
const valuesByKey = (records: LogRecord[]) =>
  records.reduce<Record<string, string[]>>(
    (byKey, record) => ({ ...byKey, [record.key]: [...(byKey[record.key] ?? []), record.value] }),
    {},
  );

describe.each([
  ['in-process', async () => createInProcessEventLog()],
  ['kafka', kafkaEventLog],
] as Array<[string, () => Promise<EventLog>]>)('EventLog contract: %s', (_name, create) => {
  it('delivers every record to every group, in order per key, including records appended before subscribing', async () => {
    const log = await create();
    await log.append('runs', [
      { key: 'r1', value: 'a' },
      { key: 'r1', value: 'b' },
    ]);
    const first: LogRecord[] = [];
    const second: LogRecord[] = [];
    await log.subscribe('runs', 'quota', async (record) => void first.push(record));
    await log.subscribe('runs', 'webhooks', async (record) => void second.push(record));
    await log.append('runs', [{ key: 'r2', value: 'c' }]);
    await waitFor(() => first.length === 3 && second.length === 3);
    expect(valuesByKey(first)).toEqual({ r1: ['a', 'b'], r2: ['c'] });
    expect(valuesByKey(second)).toEqual({ r1: ['a', 'b'], r2: ['c'] });
    expect(first.every((record) => record.topic === 'runs')).toBe(true);
    await log.close();
  });

  it('lets one group read several topics in one subscription, naming each record’s topic', async () => {
    const log = await create();
    const seen: LogRecord[] = [];
    await log.subscribe(['runs', 'agents'], 'webhooks', async (record) => void seen.push(record));
    await log.append('agents', [{ key: 'a', value: 'changed' }]);
    await log.append('runs', [{ key: 'r', value: 'ended' }]);
    await log.append('agents', [{ key: 'a', value: 'changed again' }]);
    await waitFor(() => seen.length === 3);
    expect(seen.filter((record) => record.topic === 'agents').map((record) => record.value)).toEqual(['changed', 'changed again']);
    expect(seen.filter((record) => record.topic === 'runs').map((record) => record.value)).toEqual(['ended']);
    await log.close();
  });

  it('hands a record’s trace context to its consumers (a Kafka header), and none when it had none', async () => {
    const log = await create();
    const seen: LogRecord[] = [];
    await log.subscribe('runs', 'quota', async (record) => void seen.push(record));
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await log.append('runs', [
      { key: 'r', value: 'traced', traceparent },
      { key: 'r', value: 'untraced' },
    ]);
    await waitFor(() => seen.length === 2);
    expect(seen.map((record) => [record.value, record.traceparent])).toEqual([
      ['traced', traceparent],
      ['untraced', undefined],
    ]);
    await log.close();
  });

  it('does not count a record whose handler still failed when the group left as handled', async () => {
    const log = await create();
    let attempts = 0;
    const failing = await log.subscribe('runs', 'leaving', async () => {
      attempts++;
      throw new Error('the receiver is away');
    });
    await log.append('runs', [{ key: 'k', value: 'pending' }]);
    await waitFor(() => attempts >= 2);
    await failing.unsubscribe();
    const seen: string[] = [];
    await log.subscribe('runs', 'leaving', async (record) => void seen.push(record.value));
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual(['pending']);
    await log.close();
  });

  it('redelivers a record whose handler failed (at-least-once)', async () => {
    const log = await create();
    const seen: LogRecord[] = [];
    let failures = 1;
    await log.subscribe('runs', 'g', async (record) => {
      seen.push(record);
      if (failures-- > 0) throw new Error('transient');
    });
    await log.append('runs', [{ key: 'k', value: 'x' }]);
    await waitFor(() => seen.length === 2);
    expect(seen.map((record) => record.offset)).toEqual([0, 0]);
    await log.close();
  });

  it('hands over waiting records in batches of at most maxRecords, in order, and a failed batch again whole', async () => {
    const log = await create();
    await log.append(
      'runs',
      Array.from({ length: 7 }, (_, index) => ({ key: 'r', value: `v${index}` })),
    );
    const batches: string[][] = [];
    let failures = 1;
    await log.subscribeBatches(
      'runs',
      'quota',
      async (records) => {
        batches.push(records.map((record) => record.value));
        if (failures-- > 0) throw new Error('transient');
      },
      { maxRecords: 3 },
    );
    await waitFor(() => batches.slice(1).flat().length === 7);
    expect(batches.every((batch) => batch.length >= 1 && batch.length <= 3)).toBe(true);
    // The first batch failed: the next one starts with the same records.
    expect(batches[1]).toEqual(batches[0]);
    expect(batches.slice(1).flat()).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
    await log.close();
  });

  it('stops delivering after unsubscribe and keeps topics apart', async () => {
    const log = await create();
    const seen: string[] = [];
    const subscription = await log.subscribe('a', 'g', async (record) => void seen.push(record.value));
    await log.append('b', [{ key: 'k', value: 'other-topic' }]);
    await log.append('a', [{ key: 'k', value: 'one' }]);
    await waitFor(() => seen.length === 1);
    await subscription.unsubscribe();
    await log.append('a', [{ key: 'k', value: 'two' }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual(['one']);
    await log.close();
  });
});

const redisPubSub = () => createRedisPubSub({ url: TEST_REDIS_URL, channelPrefix: `t_${randomBytes(5).toString('hex')}:` });

describe('EventLog: in-process retention', () => {
  it('keeps the last records of a topic; a group that starts later begins at the oldest kept one', async () => {
    const log = createInProcessEventLog({ retainedPerTopic: 3 });
    await log.append(
      'runs',
      ['a', 'b', 'c', 'd', 'e'].map((value) => ({ key: 'k', value })),
    );
    const seen: LogRecord[] = [];
    await log.subscribe('runs', 'late', async (record) => void seen.push(record));
    await waitFor(() => seen.length === 3);
    expect(seen.map((record) => [record.offset, record.value])).toEqual([
      [2, 'c'],
      [3, 'd'],
      [4, 'e'],
    ]);
    await log.append('runs', [{ key: 'k', value: 'f' }]);
    await waitFor(() => seen.length === 4);
    expect(seen.at(-1)).toMatchObject({ offset: 5, value: 'f' });
    await log.close();
  });
});

describe.each([
  ['in-process', async () => createInProcessPubSub()],
  ['redis', redisPubSub],
] as Array<[string, () => Promise<PubSub>]>)('PubSub contract: %s', (_name, create) => {
  it('fans a message out to current subscribers of its channel only', async () => {
    const pubsub = await create();
    const a: string[] = [];
    const b: string[] = [];
    await pubsub.subscribe('run:1', (message) => a.push(message));
    const subscription = await pubsub.subscribe('run:1', (message) => b.push(message));
    await pubsub.subscribe('run:2', () => {
      throw new Error('must not be called');
    });
    await pubsub.publish('run:1', 'hello');
    await waitFor(() => b.length === 1); // delivery may be asynchronous
    await subscription.unsubscribe();
    await pubsub.publish('run:1', 'again');
    await waitFor(() => a.length === 2);
    expect(a).toEqual(['hello', 'again']);
    expect(b).toEqual(['hello']);
    await pubsub.close();
  });

  it('keeps delivering to others when one handler throws', async () => {
    const pubsub = await create();
    const received: string[] = [];
    await pubsub.subscribe('c', () => {
      throw new Error('bad listener');
    });
    await pubsub.subscribe('c', (message) => received.push(message));
    await pubsub.publish('c', 'm');
    await waitFor(() => received.length === 1);
    await pubsub.close();
  });
});

describe('PubSub contract: redis, across connections', () => {
  it('delivers between two clients (two processes share nothing else) and keeps prefixes apart', async () => {
    const prefix = `t_${randomBytes(5).toString('hex')}:`;
    const sender = await createRedisPubSub({ url: TEST_REDIS_URL, channelPrefix: prefix });
    const receiver = await createRedisPubSub({ url: TEST_REDIS_URL, channelPrefix: prefix });
    const stranger = await createRedisPubSub({ url: TEST_REDIS_URL, channelPrefix: `${prefix}other:` });
    const received: string[] = [];
    const strangerReceived: string[] = [];
    await receiver.subscribe('cancel:1', (message) => received.push(message));
    await stranger.subscribe('cancel:1', (message) => strangerReceived.push(message));
    await sender.publish('cancel:1', 'stop');
    await waitFor(() => received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(received).toEqual(['stop']);
    expect(strangerReceived).toEqual([]);
    await Promise.all([sender.close(), receiver.close(), stranger.close()]);
  });

  it('refuses to start against an unreachable server instead of hanging', async () => {
    await expect(createRedisPubSub({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 500 })).rejects.toThrow();
  });
});

describe('PubSub: redis outage (a private redis-server, killed and restarted)', () => {
  it('refuses publish and subscribe as unavailable while Redis is away, then resubscribes and delivers again', async () => {
    const redis = await startPrivateRedis();
    const errors: Error[] = [];
    const pubsub = await createRedisPubSub({ url: redis.url, channelPrefix: 'outage:', onError: (error) => errors.push(error) });
    try {
      const kept: string[] = [];
      const dropped: string[] = [];
      await pubsub.subscribe('run:1', (message) => kept.push(message));
      const leaving = await pubsub.subscribe('run:2', (message) => dropped.push(message));

      await redis.kill9();
      const started = Date.now();
      await expect(pubsub.publish('run:1', 'lost')).rejects.toBeInstanceOf(EngineUnavailableError);
      await expect(pubsub.subscribe('run:3', () => {})).rejects.toBeInstanceOf(EngineUnavailableError);
      expect(Date.now() - started).toBeLessThan(1000);
      await leaving.unsubscribe(); // takes effect at once, Redis hears of it when it is back
      await waitFor(() => errors.length > 0);

      await redis.start();
      await waitFor(() => {
        void pubsub.publish('run:1', 'after').catch(() => {});
        return kept.length > 0;
      }, 10_000);
      await pubsub.publish('run:2', 'nobody listens');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(kept[0]).toBe('after');
      expect(dropped).toEqual([]);
    } finally {
      await pubsub.close();
      await redis.stop();
    }
  });

  it('closes while Redis is away', async () => {
    const redis = await startPrivateRedis();
    const pubsub = await createRedisPubSub({ url: redis.url, onError: () => {} });
    await pubsub.subscribe('c', () => {});
    await redis.kill9();
    await pubsub.close();
    await redis.stop();
  });
});

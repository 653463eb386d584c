import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { channels, typedPubSub } from '../src/events/channels.js';
import { createEventTails } from '../src/events/event-tail.js';
import { createMemoryStores } from './engine-harness.js';

const RUN = '00000000-0000-4000-8000-0000000000aa';
const POLL_MS = 50;

function setUp() {
  const stores = createMemoryStores();
  const pubsub = typedPubSub(createInProcessPubSub(), createLogger({ name: 'tail-test', level: 'silent' }));
  let tableReads = 0;
  const tails = createEventTails({
    events: {
      events: (tenantId, runId, afterSeq) => {
        tableReads++;
        return stores.eventRepository.events!(tenantId, runId, afterSeq);
      },
    },
    pubsub,
    currentRun: async (tenantId, runId) => stores.runRepository.get!(tenantId, runId),
    pollIntervalMs: POLL_MS,
    logger: createLogger({ name: 'tail-test', level: 'silent' }),
  });
  const store = async (seq: number, type: string, publish = true) => {
    const [event] = await stores.eventRepository.appendEvents!({ runId: RUN, rootRunId: RUN, tenantId: 't1', agentName: 'a' }, [
      { seq, type, data: {} },
    ]);
    if (publish) await pubsub.publish(channels.runEvents(RUN), event);
  };
  const read = async (afterSeq = 0) => {
    const seen: number[] = [];
    for await (const event of tails.tail('t1', RUN, afterSeq, AbortSignal.timeout(5000))) seen.push(event.seq);
    return seen;
  };
  return { stores, tails, store, read, tableReads: () => tableReads };
}

const insertRun = (stores: ReturnType<typeof createMemoryStores>) =>
  stores.runRepository.insert!('t1', {
    id: RUN,
    agentName: 'a',
    agentVersion: 1,
    sessionId: null,
    kind: 'Interactive',
    isStreaming: true,
    rootRunId: RUN,
    parentRunId: null,
    depth: 0,
    userId: null,
    labels: {},
  });

describe('shared run event tails', () => {
  it('serves many readers of one run from one tail: history first, then live events, until the terminal event', async () => {
    const { stores, tails, store, read } = setUp();
    await insertRun(stores);
    await store(1, 'run.started');
    const readers = [read(), read(), read(1)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(tails.following()).toBe(1);
    await store(2, 'message.delta');
    await store(3, 'run.completed');
    expect(await Promise.all(readers)).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [2, 3],
    ]);
    expect(tails.following()).toBe(0);
  });

  it('reads a missed event from the table when a later one arrives, and polls once per run, not per reader', async () => {
    const { stores, store, read, tableReads } = setUp();
    await insertRun(stores);
    const readers = Array.from({ length: 20 }, () => read());
    await new Promise((resolve) => setTimeout(resolve, 10));
    const before = tableReads();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS * 4));
    // 20 idle readers, four poll intervals: the shared tail read the table about four times, not eighty.
    expect(tableReads() - before).toBeLessThanOrEqual(6);
    await store(1, 'run.started', false);
    await store(2, 'run.completed');
    for (const seen of await Promise.all(readers)) expect(seen).toEqual([1, 2]);
  });

  it('hands a reader the events it missed even after a later reader read past them', async () => {
    const { stores, store, read } = setUp();
    await insertRun(stores);
    await store(1, 'run.started');
    const behind = read();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Stored but never published (pub/sub was away): only the table has them.
    await store(2, 'message.delta', false);
    await store(3, 'run.completed', false);
    expect(await read()).toEqual([1, 2, 3]);
    expect(await behind).toEqual([1, 2, 3]);
  });

  it('ends every reader of a run that finished without a terminal event', async () => {
    const { stores, store, read } = setUp();
    await insertRun(stores);
    await store(1, 'run.started');
    const reading = read();
    await stores.runRepository.finish!(RUN, {
      status: 'Completed',
      usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 0 },
      cost: null,
      prices: { input: null, output: null, cachedInput: null },
      errorType: null,
      errorMessage: null,
    });
    expect(await reading).toEqual([1]);
  });
});

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
  let polls = 0;
  /** A run whose table reads fail (from the moment it is set). */
  const failing = { runId: undefined as string | undefined };
  const tails = createEventTails({
    events: {
      events: (tenantId, runId, afterSeq) => {
        tableReads++;
        if (runId === failing.runId) return Promise.reject(new Error('read failed'));
        return stores.eventRepository.events!(tenantId, runId, afterSeq);
      },
      followedRuns: (runIds) => {
        polls++;
        return stores.eventRepository.followedRuns!(runIds);
      },
    },
    pubsub,
    pollIntervalMs: POLL_MS,
    logger: createLogger({ name: 'tail-test', level: 'silent' }),
  });
  const store = async (seq: number, type: string, publish = true) => {
    const [event] = await stores.eventRepository.appendEvents!({ runId: RUN, rootRunId: RUN, tenantId: 't1', agentName: 'a' }, [
      { seq, type, data: {} },
    ]);
    if (publish) await pubsub.publish(channels.runEvents(RUN), event);
  };
  const read = async (afterSeq = 0, runId = RUN) => {
    const seen: number[] = [];
    for await (const event of tails.tail('t1', runId, afterSeq, AbortSignal.timeout(5000))) seen.push(event.seq);
    return seen;
  };
  return { stores, tails, store, read, failing, tableReads: () => tableReads, polls: () => polls };
}

const insertRun = (stores: ReturnType<typeof createMemoryStores>, id = RUN) =>
  stores.runRepository.insert!('t1', {
    id,
    agentName: 'a',
    agentVersion: 1,
    sessionId: null,
    kind: 'Interactive',
    isStreaming: true,
    rootRunId: id,
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

  it('reads a missed event from the table when a later one arrives, and polls once per interval, not per reader', async () => {
    const { stores, store, read, tableReads, polls } = setUp();
    await insertRun(stores);
    const readers = Array.from({ length: 20 }, () => read());
    await new Promise((resolve) => setTimeout(resolve, 10));
    const [readsBefore, pollsBefore] = [tableReads(), polls()];
    await new Promise((resolve) => setTimeout(resolve, POLL_MS * 4));
    // 20 idle readers, four poll intervals: about four polls and no read of the events themselves.
    expect(polls() - pollsBefore).toBeLessThanOrEqual(6);
    expect(tableReads() - readsBefore).toBe(0);
    await store(1, 'run.started', false);
    await store(2, 'run.completed');
    for (const seen of await Promise.all(readers)) expect(seen).toEqual([1, 2]);
  });

  it('polls once per interval for every run followed, however many', async () => {
    const { stores, tails, read, polls, tableReads } = setUp();
    const runIds = Array.from({ length: 30 }, (_, index) => `00000000-0000-4000-8000-0000000001${String(index).padStart(2, '0')}`);
    for (const runId of runIds) await insertRun(stores, runId);
    const readers = runIds.map((runId) => read(0, runId));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(tails.following()).toBe(30);
    const [readsBefore, pollsBefore] = [tableReads(), polls()];
    await new Promise((resolve) => setTimeout(resolve, POLL_MS * 4));
    expect(polls() - pollsBefore).toBeGreaterThanOrEqual(2);
    expect(polls() - pollsBefore).toBeLessThanOrEqual(6);
    expect(tableReads() - readsBefore).toBe(0);
    // Each run ends without its terminal event reaching anyone: every reader is ended by the poll.
    for (const runId of runIds) stores.runs.get(runId)!.status = 'Failed';
    expect((await Promise.all(readers)).every((seen) => seen.length === 0)).toBe(true);
    expect(tails.following()).toBe(0);
    // With nothing followed the poll stops.
    const stoppedAt = polls();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS * 3));
    expect(polls()).toBe(stoppedAt);
  });

  it('catches up every other run in the round in which one run’s table read fails', async () => {
    const { stores, read, failing } = setUp();
    const [first, second] = ['00000000-0000-4000-8000-0000000002a1', '00000000-0000-4000-8000-0000000002a2'];
    const target = (runId: string) => ({ runId, rootRunId: runId, tenantId: 't1', agentName: 'a' });
    for (const runId of [first, second]) await insertRun(stores, runId);
    // The first run is followed first, so its catch-up comes first in every round.
    const readingFirst = read(0, first);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const readingSecond = read(0, second);
    await new Promise((resolve) => setTimeout(resolve, 10));
    failing.runId = first;
    // Stored without their pub/sub messages: only the poll's catch-up hands them on.
    await stores.eventRepository.appendEvents!(target(first), [{ seq: 1, type: 'run.completed', data: {} }]);
    await stores.eventRepository.appendEvents!(target(second), [{ seq: 1, type: 'run.completed', data: {} }]);
    const startedAt = Date.now();
    expect(await readingSecond).toEqual([1]);
    expect(Date.now() - startedAt).toBeLessThan(POLL_MS * 10);
    failing.runId = undefined;
    expect(await readingFirst).toEqual([1]);
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

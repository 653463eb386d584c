import type { Caller } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { createRunEventHub } from '../src/routes/runs/run-event-hub.js';

const CALLER: Caller = { tenantId: 't1', actor: 'reader' };

/**
 * A fake run executor: each run's events are pushed by the test; every `open` is one call, served
 * from its `afterSeq` (history, then live) until the run ends.
 */
function fakeExecutor() {
  const events: Array<{ seq: number }> = [];
  const calls: Array<{ afterSeq: number; signal: AbortSignal }> = [];
  let ended = false;
  const waiting = new Set<() => void>();
  const wakeAll = () => waiting.forEach((wake) => wake());
  return {
    calls,
    push(count: number) {
      for (let index = 0; index < count; index++) events.push({ seq: (events.at(-1)?.seq ?? 0) + 1 });
      wakeAll();
    },
    /** Skips sequences, as a run whose event write failed does. */
    skip(count: number) {
      events.push({ seq: (events.at(-1)?.seq ?? 0) + 1 + count });
      wakeAll();
    },
    end() {
      ended = true;
      wakeAll();
    },
    open(_caller: Caller, _runId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<{ seq: number }> {
      calls.push({ afterSeq, signal });
      return (async function* () {
        let position = afterSeq;
        while (!signal.aborted) {
          const next = events.find((event) => event.seq > position);
          if (next) {
            yield next;
            position = next.seq;
            continue;
          }
          if (ended) return;
          await new Promise<void>((resolve) => {
            const wake = () => {
              waiting.delete(wake);
              resolve();
            };
            waiting.add(wake);
            signal.addEventListener('abort', wake, { once: true });
          });
        }
      })();
    },
  };
}

async function readAll(iterable: AsyncIterable<{ seq: number }>) {
  const seen: number[] = [];
  for await (const event of iterable) seen.push(event.seq);
  return seen;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe('shared run event streams in the gateway', () => {
  it('serves every reader of a run from one executor call: each from its own position, until the run ends', async () => {
    const executor = fakeExecutor();
    const hub = createRunEventHub({ open: executor.open, keep: 100 });
    executor.push(3);
    const first = readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal));
    await tick();
    const second = readAll(hub.follow(CALLER, 'r1', 2, new AbortController().signal));
    const third = readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal));
    await tick();
    executor.push(2);
    await tick();
    executor.end();
    expect(await first).toEqual([1, 2, 3, 4, 5]);
    expect(await second).toEqual([3, 4, 5]);
    expect(await third).toEqual([1, 2, 3, 4, 5]);
    expect(executor.calls).toHaveLength(1);
    expect(hub.sharedStreams()).toBe(0);
  });

  it('gives a reader behind what the shared stream keeps a call of its own', async () => {
    const executor = fakeExecutor();
    const hub = createRunEventHub({ open: executor.open, keep: 2 });
    const leader = readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal));
    executor.push(10);
    await tick();
    const late = readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal));
    await tick();
    executor.end();
    expect(await leader).toEqual(range(1, 10));
    expect(await late).toEqual(range(1, 10));
    expect(executor.calls.map((call) => call.afterSeq)).toEqual([0, 0]);
  });

  it('serves runs whose sequence has gaps (an event write that failed): nothing skipped, nothing repeated', async () => {
    const executor = fakeExecutor();
    const hub = createRunEventHub({ open: executor.open, keep: 3 });
    executor.push(2);
    executor.skip(2);
    executor.push(2);
    const leader = readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal));
    await tick();
    const fromFive = readAll(hub.follow(CALLER, 'r1', 5, new AbortController().signal));
    const fromTwo = readAll(hub.follow(CALLER, 'r1', 2, new AbortController().signal));
    await tick();
    executor.skip(1);
    executor.push(4);
    await tick();
    executor.end();
    expect(await leader).toEqual([1, 2, 5, 6, 7, 9, 10, 11, 12, 13]);
    expect(await fromFive).toEqual([6, 7, 9, 10, 11, 12, 13]);
    expect(await fromTwo).toEqual([5, 6, 7, 9, 10, 11, 12, 13]);
    expect(executor.calls).toHaveLength(1);
  });

  it('keeps runs of different tenants apart', async () => {
    const executor = fakeExecutor();
    const hub = createRunEventHub({ open: executor.open, keep: 100 });
    const mine = readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal));
    const theirs = readAll(hub.follow({ tenantId: 't2', actor: 'other' }, 'r1', 0, new AbortController().signal));
    await tick();
    executor.push(1);
    executor.end();
    await Promise.all([mine, theirs]);
    expect(executor.calls).toHaveLength(2);
  });

  it('closes the executor call when the last reader leaves, and only then', async () => {
    const executor = fakeExecutor();
    const hub = createRunEventHub({ open: executor.open, keep: 100 });
    const leaving = [new AbortController(), new AbortController()];
    const readers = leaving.map((controller) => readAll(hub.follow(CALLER, 'r1', 0, controller.signal)));
    executor.push(1);
    await tick();
    leaving[0].abort();
    expect(await readers[0]).toEqual([1]);
    expect(executor.calls[0].signal.aborted).toBe(false);
    leaving[1].abort();
    expect(await readers[1]).toEqual([1]);
    expect(executor.calls[0].signal.aborted).toBe(true);
    expect(hub.sharedStreams()).toBe(0);
  });

  it('hands the executor call’s failure to every reader', async () => {
    const hub = createRunEventHub({
      open: () =>
        (async function* () {
          yield { seq: 1 };
          throw new Error('executor went away');
        })(),
      keep: 100,
    });
    const readers = [0, 1].map(() => readAll(hub.follow(CALLER, 'r1', 0, new AbortController().signal)));
    for (const reader of readers) await expect(reader).rejects.toThrow('executor went away');
  });
});

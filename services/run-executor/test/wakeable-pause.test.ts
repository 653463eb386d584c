import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { createWakeablePause } from '../src/wakeable-pause.js';

describe('the wakeable pause', () => {
  it('adds no lasting abort listener: the count stays flat over 10,000 sleeps', async () => {
    const signal = new AbortController().signal;
    const pause = createWakeablePause();
    for (let sleep = 0; sleep < 10_000; sleep++) {
      const sleeping = pause.sleep(60_000, signal);
      pause.wake();
      await sleeping;
    }
    for (let sleep = 0; sleep < 100; sleep++) await pause.sleep(0, signal);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('ends on abort, and at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    const pause = createWakeablePause();
    const sleeping = pause.sleep(60_000, controller.signal);
    controller.abort();
    await sleeping;
    await pause.sleep(60_000, controller.signal);
  });

  it('sleeps with no timer at all when asked for Infinity, until woken or aborted', async () => {
    vi.useFakeTimers();
    try {
      const controller = new AbortController();
      const pause = createWakeablePause();
      const woken = pause.sleep(Infinity, controller.signal);
      expect(vi.getTimerCount()).toBe(0);
      pause.wake();
      await woken;
      const aborted = pause.sleep(Infinity, controller.signal);
      controller.abort();
      await aborted;
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

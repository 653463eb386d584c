import { createInProcessPubSub, type PubSub } from '@hangar/messaging';
import { createLogger } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { createCancellation } from '../src/cancellation/cancellation.service.js';
import { typedPubSub } from '../src/events/channels.js';

/** Cancels across instances: every executor hears every cancel on one channel; the one executing the root answers. */

const logger = createLogger({ name: 'cancellation-test', level: 'silent' });
const instance = (pubsub: PubSub, replyTimeoutMs = 2000) =>
  createCancellation({ pubsub: typedPubSub(pubsub, logger), logger, replyTimeoutMs });

describe('cancellation across instances', () => {
  it('stops a run where its root executes, from any instance, and only that instance answers', async () => {
    const pubsub = createInProcessPubSub();
    const [executing, idle, asking] = [instance(pubsub), instance(pubsub), instance(pubsub)];
    await Promise.all([executing.hear(), idle.hear(), asking.hear()]);
    const root = new AbortController();
    const child = new AbortController();
    executing.track('root-1', 'root-1', root);
    executing.track('child-1', 'root-1', child);
    expect(await asking.askExecutingInstance({ id: 'child-1', rootRunId: 'root-1' })).toBe(true);
    expect([root.signal.aborted, child.signal.aborted]).toEqual([false, true]);
    // The root takes its tree with it.
    expect(await asking.askExecutingInstance({ id: 'root-1', rootRunId: 'root-1' })).toBe(true);
    expect(root.signal.aborted).toBe(true);
    await Promise.all([executing.stopHearing(), idle.stopHearing(), asking.stopHearing()]);
  });

  it('answers no for a run its root’s instance no longer executes, and nobody answers for a tree executing nowhere', async () => {
    const pubsub = createInProcessPubSub();
    const [executing, asking] = [instance(pubsub), instance(pubsub, 200)];
    await Promise.all([executing.hear(), asking.hear()]);
    executing.track('root-2', 'root-2', new AbortController());
    expect(await asking.askExecutingInstance({ id: 'child-gone', rootRunId: 'root-2' })).toBe(false);
    const started = performance.now();
    expect(await asking.askExecutingInstance({ id: 'root-3', rootRunId: 'root-3' })).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await Promise.all([executing.stopHearing(), asking.stopHearing()]);
  });

  it('keeps trying to hear cancels while pub/sub refuses, and hears them once it answers', async () => {
    const pubsub = createInProcessPubSub();
    let refusals = 2;
    const flaky: PubSub = {
      ...pubsub,
      publish: (channel, message) => pubsub.publish(channel, message),
      subscribe: (channel, handler) =>
        refusals-- > 0 ? Promise.reject(new Error('Redis is unavailable')) : pubsub.subscribe(channel, handler),
    };
    const executing = instance(flaky);
    const asking = instance(pubsub);
    await executing.hear();
    const run = new AbortController();
    executing.track('root-4', 'root-4', run);
    await new Promise((resolve) => setTimeout(resolve, 2300));
    expect(await asking.askExecutingInstance({ id: 'root-4', rootRunId: 'root-4' })).toBe(true);
    expect(run.signal.aborted).toBe(true);
    await executing.stopHearing();
  });
});

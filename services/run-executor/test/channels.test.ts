import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { channels, typedPubSub } from '../src/events/channels.js';

describe('pub/sub channels', () => {
  const raw = createInProcessPubSub();
  const pubsub = typedPubSub(raw, createLogger({ name: 'channels-test', level: 'silent' }));

  it('delivers a valid message parsed, and refuses to send an invalid one', async () => {
    const received: unknown[] = [];
    const subscription = await pubsub.subscribe(channels.cancels(), (message) => received.push(message));
    await pubsub.publish(channels.cancels(), { rootRunId: 'root-1', runId: 'run-1', replyTo: 'cancel-reply:x' });
    await expect(pubsub.publish(channels.cancels(), { rootRunId: 'root-1', runId: 'run-1', replyTo: 'elsewhere' })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(received).toEqual([{ rootRunId: 'root-1', runId: 'run-1', replyTo: 'cancel-reply:x' }]);
    await subscription.unsubscribe();
  });

  it('drops a malformed message from another publisher instead of handing it on', async () => {
    const received: unknown[] = [];
    const subscription = await pubsub.subscribe(channels.cancelReply('cancel-reply:y'), (message) => received.push(message));
    await raw.publish('cancel-reply:y', 'not json');
    await raw.publish('cancel-reply:y', JSON.stringify({ stopped: 'yes' }));
    await raw.publish('cancel-reply:y', JSON.stringify({ stopped: true }));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(received).toEqual([{ stopped: true }]);
    await subscription.unsubscribe();
  });
});

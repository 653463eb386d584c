import { z } from 'zod';
import type { Logger } from '@hangar/platform';
import type { PubSub, Subscription } from '@hangar/messaging';

/**
 * Every pub/sub channel of the run executor, with its payload schema. Messages are validated when
 * sent and when received: a malformed message (another version, a stray publisher) is logged and
 * dropped, never cast.
 */
const StoredRunEvent = z.object({
  seq: z.number().int().positive(),
  runId: z.string(),
  type: z.string(),
  at: z.string(),
  data: z.record(z.string(), z.unknown()),
});

export const channels = {
  /** A run's events, published once stored (readers re-read the table; the message is a wake-up with the event). */
  runEvents: (runId: string) => ({ name: `run:${runId}`, schema: StoredRunEvent }),
  /** An approval of the run was decided or expired: the waiting run re-reads its approvals. */
  approvals: (runId: string) => ({
    name: `approval:${runId}`,
    schema: z.object({ approvalId: z.string().nullable() }),
  }),
  /**
   * Cancel a run of the tree rooted at `rootRunId`: heard by every run executor, answered on
   * `replyTo` by the one executing the root (one channel per process, not a subscription per run).
   */
  cancels: () => ({
    name: 'run-cancels',
    schema: z.object({ rootRunId: z.string(), runId: z.string(), replyTo: z.string().startsWith('cancel-reply:') }),
  }),
  cancelReply: (name: string) => ({ name, schema: z.object({ stopped: z.boolean() }) }),
  /** A run was queued: workers poll now rather than at their next interval. */
  jobs: () => ({ name: 'jobs:run', schema: z.object({ runId: z.string() }) }),
  /** A workflow run is ready (queued, or its last question answered): workers look now. */
  workflowsReady: () => ({ name: 'workflows:ready', schema: z.object({ runId: z.string() }) }),
};

export interface Channel<T> {
  name: string;
  schema: z.ZodType<T>;
}

export interface TypedPubSub {
  publish<T>(channel: Channel<T>, message: T): Promise<void>;
  subscribe<T>(channel: Channel<T>, handler: (message: T) => void): Promise<Subscription>;
}

export function typedPubSub(pubsub: PubSub, logger: Logger): TypedPubSub {
  return {
    publish: async (channel, message) => pubsub.publish(channel.name, JSON.stringify(channel.schema.parse(message))),
    subscribe: (channel, handler) =>
      pubsub.subscribe(channel.name, (raw) => {
        let parsed;
        try {
          parsed = channel.schema.safeParse(JSON.parse(raw));
        } catch {
          parsed = undefined;
        }
        if (!parsed?.success) {
          logger.warn({ channel: channel.name }, 'dropped a malformed pub/sub message');
          return;
        }
        handler(parsed.data);
      }),
  };
}

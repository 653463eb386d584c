import { randomUUID } from 'node:crypto';
import type { Logger } from '@hangar/platform';
import type { Subscription } from '@hangar/messaging';
import { channels, type TypedPubSub } from '../events/channels.js';

const CANCEL_SUBSCRIBE_RETRY_MS = 1000;

export interface CancellationDeps {
  pubsub: TypedPubSub;
  logger: Logger;
  /** `Hangar:Runs:CancelReplyTimeout`: how long a cancel waits for the executing instance's answer. */
  replyTimeoutMs: number;
}

/**
 * Which runs execute in this process, and cancels of them from any instance: every executor hears
 * every cancel on one channel, and the one executing the tree's root (its children execute in the
 * same process) answers whether it stopped the run; the others stay silent.
 */
export function createCancellation(deps: CancellationDeps) {
  const active = new Map<string, { rootRunId: string; controller: AbortController }>();
  const idle: Array<() => void> = [];
  let hearing: Subscription | undefined;
  let retry: NodeJS.Timeout | undefined;
  let deaf = false;

  /** Subscribes to the cancel channel; while pub/sub refuses (an outage), tries again every second in the background. */
  async function hear() {
    if (deaf) return;
    try {
      hearing = await deps.pubsub.subscribe(channels.cancels(), ({ rootRunId, runId, replyTo }) => {
        if (!active.has(rootRunId)) return;
        const stopped = stopLocally(runId);
        deps.pubsub
          .publish(channels.cancelReply(replyTo), { stopped })
          .catch((error) => deps.logger.warn({ err: error, runId }, 'cancel reply could not be sent'));
      });
      if (deaf) await hearing.unsubscribe();
    } catch (error) {
      deps.logger.warn({ err: error }, 'cancels sent through other instances cannot be heard yet; trying again in 1 s');
      retry = setTimeout(() => void hear(), CANCEL_SUBSCRIBE_RETRY_MS);
      retry.unref();
    }
  }

  /** Aborts a run executing in this process; a root takes every run of its tree with it. */
  function stopLocally(runId: string): boolean {
    const executing = active.get(runId);
    if (!executing) return false;
    if (executing.rootRunId === runId) for (const other of active.values()) if (other.rootRunId === runId) other.controller.abort();
    executing.controller.abort();
    return true;
  }

  return {
    stopLocally,

    /** A run now executing here; `release` when it ended. */
    track(runId: string, rootRunId: string, controller: AbortController) {
      active.set(runId, { rootRunId, controller });
      return () => {
        active.delete(runId);
        if (active.size === 0) for (const resolve of idle.splice(0)) resolve();
      };
    },

    /** Resolves once no run executes in this process. */
    whenIdle(): Promise<void> {
      return active.size === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve));
    },

    /** Stops every run executing here with `reason` (a run already stopping keeps its own). */
    stopAll(reason: Error) {
      for (const { controller } of active.values()) controller.abort(reason);
    },

    /** Hears cancels sent from any instance, for the process's life (a run's start waits for nothing). */
    hear,

    async stopHearing() {
      deaf = true;
      clearTimeout(retry);
      await hearing?.unsubscribe();
    },

    /** Sends a cancel to the instance running the run's root and waits for its answer (false: nobody stopped it). */
    async askExecutingInstance(run: { id: string; rootRunId: string }): Promise<boolean> {
      const reply = channels.cancelReply(`cancel-reply:${randomUUID()}`);
      let answer: (stopped: boolean) => void = () => {};
      const answered = new Promise<boolean>((resolve) => (answer = resolve));
      const replies = await deps.pubsub.subscribe(reply, (message) => answer(message.stopped));
      const timer = setTimeout(() => answer(false), deps.replyTimeoutMs);
      try {
        await deps.pubsub.publish(channels.cancels(), { rootRunId: run.rootRunId, runId: run.id, replyTo: reply.name });
        return await answered;
      } finally {
        clearTimeout(timer);
        await replies.unsubscribe();
      }
    },
  };
}

export type Cancellation = ReturnType<typeof createCancellation>;

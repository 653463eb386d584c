import { randomUUID } from 'node:crypto';
import type { Logger } from '@hangar/platform';
import { channels, type TypedPubSub } from '../events/channels.js';

export interface CancellationDeps {
  pubsub: TypedPubSub;
  logger: Logger;
  /** `Hangar:Runs:CancelReplyTimeout`: how long a cancel waits for the executing instance's answer. */
  replyTimeoutMs: number;
}

/**
 * Which runs execute in this process, and cancels of them from any instance: the root of a tree
 * listens on its cancel channel (its children execute in the same process) and answers whether it
 * stopped the run.
 */
export function createCancellation(deps: CancellationDeps) {
  const active = new Map<string, { rootRunId: string; controller: AbortController }>();
  const idle: Array<() => void> = [];

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

    /** The root listens for cancels of its tree sent from any instance. */
    listen(rootRunId: string) {
      return deps.pubsub.subscribe(channels.cancel(rootRunId), ({ runId, replyTo }) => {
        const stopped = stopLocally(runId);
        deps.pubsub
          .publish(channels.cancelReply(replyTo), { stopped })
          .catch((error) => deps.logger.warn({ err: error, runId }, 'cancel reply could not be sent'));
      });
    },

    /** Sends a cancel to the instance running the run's root and waits for its answer (false: nobody stopped it). */
    async askExecutingInstance(run: { id: string; rootRunId: string }): Promise<boolean> {
      const reply = channels.cancelReply(`cancel-reply:${randomUUID()}`);
      let answer: (stopped: boolean) => void = () => {};
      const answered = new Promise<boolean>((resolve) => (answer = resolve));
      const replies = await deps.pubsub.subscribe(reply, (message) => answer(message.stopped));
      const timer = setTimeout(() => answer(false), deps.replyTimeoutMs);
      try {
        await deps.pubsub.publish(channels.cancel(run.rootRunId), { runId: run.id, replyTo: reply.name });
        return await answered;
      } finally {
        clearTimeout(timer);
        await replies.unsubscribe();
      }
    },
  };
}

export type Cancellation = ReturnType<typeof createCancellation>;

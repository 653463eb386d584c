import { randomUUID } from 'node:crypto';
import { createClaimLoop, type Logger } from '@hangar/platform';
import type { Subscription } from '@hangar/messaging';
import { channels, type TypedPubSub } from '../events/channels.js';
import type { WorkflowRunRow } from './workflow.model.js';
import type { WorkflowRepository } from './workflow.repository.js';
import type { WorkflowRunner } from './workflow-runner.js';

export interface WorkflowWorkerSettings {
  /** The longest sleep between two looks for ready runs (a wake-up over pub/sub cuts it short). */
  pollIntervalMs: number;
  /** How long a lease lasts unrenewed: how soon another instance resumes a run whose holder died. */
  leaseMs: number;
  /** `Workflows:MaxConcurrentRuns`: runs this instance executes at a time. */
  maxConcurrentRuns: number;
}

/**
 * Takes ready workflow runs (queued, answered, or held by an instance that died) and executes them
 * with the runner. A run is leased (`FOR UPDATE SKIP LOCKED`) and the lease renewed every third of
 * its length; one lost (this instance stalled past it) stops the run here, as another goes on with it.
 */
export function createWorkflowWorker(deps: {
  repository: Pick<WorkflowRepository, 'claimRuns' | 'renewLease'>;
  runner: WorkflowRunner;
  pubsub: TypedPubSub;
  logger: Logger;
  settings: WorkflowWorkerSettings;
}) {
  const { repository, runner, logger, settings } = deps;
  const owner = randomUUID();
  let subscription: Subscription | undefined;

  async function execute(run: WorkflowRunRow, stop: AbortSignal) {
    const lost = new AbortController();
    let renewedAt = Date.now();
    const renewal = setInterval(() => {
      repository
        .renewLease(run.id, owner, settings.leaseMs)
        .then((held) => {
          if (held) renewedAt = Date.now();
          else lost.abort(new Error('the workflow run lease was lost'));
        })
        .catch((error) => {
          logger.warn({ err: error, runId: run.id }, 'workflow run lease could not be renewed');
          // Unrenewed past its length, the lease may be another instance's by now: stop rather than write beside it.
          if (Date.now() - renewedAt >= settings.leaseMs) lost.abort(new Error('the workflow run lease expired unrenewed'));
        });
    }, settings.leaseMs / 3);
    try {
      const outcome = await runner.execute(run, owner, lost.signal, stop);
      if (outcome === 'given-back') logger.info({ runId: run.id }, 'workflow run given back; another instance goes on with it');
    } catch (error) {
      // The run could not even be ended (the store away): its lease expires and an instance resumes it.
      logger.warn({ err: error, runId: run.id }, 'workflow run stopped; it resumes once its lease expires');
    } finally {
      clearInterval(renewal);
    }
  }

  const loop = createClaimLoop({
    what: 'workflow runs',
    claim: (free) => repository.claimRuns(owner, settings.leaseMs, free),
    execute,
    maxConcurrent: settings.maxConcurrentRuns,
    pollIntervalMs: settings.pollIntervalMs,
    logger,
  });

  return {
    async start() {
      // A missed wake-up only waits for the next poll.
      subscription = await deps.pubsub.subscribe(channels.workflowsReady(), loop.wake).catch((error) => {
        logger.warn({ err: error }, 'workflow wake-ups cannot be heard; ready runs are found by polling');
        return undefined;
      });
      loop.start();
    },
    /** Stops taking runs and gives back those it holds, for another instance to go on with at once. */
    async stop() {
      await subscription?.unsubscribe().catch(() => undefined);
      await loop.stop(new Error('the run executor stops'));
    },
  };
}

export type WorkflowWorker = ReturnType<typeof createWorkflowWorker>;

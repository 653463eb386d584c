import { randomUUID } from 'node:crypto';
import { HangarError, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { HumanWait } from '../approvals/approvals.service.js';
import { channels, type TypedPubSub } from '../events/channels.js';
import { appendAfterStored, type EventWriterDeps } from '../events/event-writer.js';
import type { Preparation } from '../runs/prepare.js';
import type { RunExecution } from '../runs/run-execution.js';
import { ZERO_USAGE, type RunRow, type StartRunRequest } from '../runs/run.model.js';
import type { RunRepository } from '../runs/run.repository.js';
import type { JobRepository } from './job.repository.js';

/** The handler key of queued runs, for `Scheduling:LaneByHandlerKey`. */
export const QUEUED_RUN_HANDLER_KEY = 'agent-run';
const DEFAULT_LANE = 'default';

export interface QueuedRunsDeps {
  jobs: Pick<JobRepository, 'enqueue'>;
  runs: Pick<RunRepository, 'finish'>;
  writer: EventWriterDeps;
  preparation: Pick<Preparation, 'prepare'>;
  execution: RunExecution;
  pubsub: TypedPubSub;
  logger: Logger;
  settings: Pick<HangarConfig, 'AsyncRun' | 'Scheduling'>;
}

/** `Prefer: respond-async` runs: queued as a job, executed by whichever worker leases it. */
export function createQueuedRuns(deps: QueuedRunsDeps) {
  /**
   * Ends a queued run that never reached a model as Failed (no usage, no cost, no price), with its
   * terminal event; undefined when it had ended already.
   */
  async function failUnstarted(tenantId: string, runId: string, errorType: string, errorMessage: string): Promise<RunRow | undefined> {
    const failed = await deps.runs.finish(runId, {
      status: 'Failed',
      usage: ZERO_USAGE,
      cost: null,
      prices: { input: null, output: null, cachedInput: null },
      errorType,
      errorMessage,
    });
    if (!failed) return undefined;
    const target = { runId, rootRunId: failed.rootRunId, tenantId, agentName: failed.agentName };
    await appendAfterStored(deps.writer, target, 'run.failed', { errorType, message: errorMessage, usage: ZERO_USAGE, cost: null });
    return failed;
  }

  return {
    /** The same refusals as a run, then a Queued run row and its job. */
    async enqueue(caller: Caller, request: StartRunRequest): Promise<RunRow> {
      if (!deps.settings.AsyncRun.Enabled) throw new HangarError('notImplemented', 'queued runs are switched off (AsyncRun:Enabled)');
      const { definition, version } = await deps.preparation.prepare(caller, request, { admit: true, tenant: false });
      const runId = randomUUID();
      const run = await deps.jobs.enqueue(
        caller.tenantId,
        {
          id: runId,
          agentName: definition.name,
          agentVersion: version,
          sessionId: request.sessionId ?? null,
          kind: 'Async',
          isStreaming: false,
          rootRunId: runId,
          parentRunId: null,
          depth: 0,
          userId: caller.userId ?? null,
          labels: caller.labels ?? {},
        },
        { caller, request },
        deps.settings.Scheduling.LaneByHandlerKey[QUEUED_RUN_HANDLER_KEY] ?? DEFAULT_LANE,
      );
      // The job is committed: the wake-up is a hint (workers poll anyway), and its failure must not fail the request.
      deps.pubsub
        .publish(channels.jobs(), { runId })
        .catch((error) => deps.logger.warn({ err: error, runId }, 'job wake-up not sent; workers find the job at their next poll'));
      return run;
    },

    /** Executes a leased job's run; a refusal now (the agent was deleted meanwhile) fails the run. */
    async runQueued(job: { runId: string; payload: unknown }, signal: AbortSignal, humanWait?: HumanWait): Promise<RunRow | undefined> {
      const { caller, request } = job.payload as { caller: Caller; request: StartRunRequest };
      let last: RunRow | undefined;
      try {
        for await (const update of deps.execution.execute(caller, request, { signal, queuedRunId: job.runId, humanWait })) {
          if (update.type === 'finished' || update.type === 'failed') last = update.run;
        }
      } catch (error) {
        const refusal = error instanceof HangarError ? error : undefined;
        last = await failUnstarted(
          caller.tenantId,
          job.runId,
          refusal?.errorType ?? 'internal_error',
          refusal?.message ?? 'the queued run could not start',
        );
      }
      return last;
    },

    /** A job whose attempts ran out after its workers died: its run ends as Failed. */
    abandonQueued: (job: { tenantId: string; runId: string }) =>
      failUnstarted(job.tenantId, job.runId, 'worker_lost', 'the worker executing this queued run stopped (AsyncRun:MaxAttempts reached)'),
  };
}

export type QueuedRuns = ReturnType<typeof createQueuedRuns>;

import { randomUUID } from 'node:crypto';
import { AGENT_RUN_HANDLER_KEY } from '@hangar/contracts';
import { HangarError, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { HumanWait } from '../approvals/approvals.service.js';
import { channels, type TypedPubSub } from '../events/channels.js';
import type { EventWriterDeps } from '../events/event-writer.js';
import type { Preparation } from '../runs/prepare.js';
import type { RunExecution } from '../runs/run-execution.js';
import { recordRunEnd } from '../runs/run-ending.js';
import { ZERO_USAGE, type NewRun, type RunRow, type StartRunRequest } from '../runs/run.model.js';
import type { RunRepository } from '../runs/run.repository.js';
import type { JobRepository } from './job.repository.js';

/** The handler key of queued runs, for `Scheduling:LaneByHandlerKey`. */
export const QUEUED_RUN_HANDLER_KEY = AGENT_RUN_HANDLER_KEY;
const DEFAULT_LANE = 'default';

/** The lane a job of this handler is queued in (`Scheduling:LaneByHandlerKey`). */
export const laneOf = (settings: Pick<HangarConfig, 'Scheduling'>, handlerKey: string) =>
  settings.Scheduling.LaneByHandlerKey[handlerKey] ?? DEFAULT_LANE;

/** What a queued run's job carries: whom it runs for and what it asks. */
export interface QueuedRunPayload {
  caller: Caller;
  request: StartRunRequest;
  /** Set when nobody was admitted by quota at queueing time (a schedule fired it). */
  admitQueued?: boolean;
}

/** A queued root run's row, before it is stored. */
export const queuedRun = (caller: Caller, fields: Pick<NewRun, 'agentName' | 'agentVersion' | 'sessionId' | 'kind' | 'labels'>): NewRun => {
  const id = randomUUID();
  return { ...fields, id, isStreaming: false, rootRunId: id, parentRunId: null, depth: 0, userId: caller.userId ?? null };
};

export interface QueuedRunsDeps {
  jobs: Pick<JobRepository, 'enqueue'>;
  runs: Pick<RunRepository, 'finish' | 'finishWithEvent'>;
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
    const outcome = {
      status: 'Failed' as const,
      usage: ZERO_USAGE,
      cost: null,
      prices: { input: null, output: null, cachedInput: null },
      errorType,
      errorMessage,
    };
    return recordRunEnd(deps, { tenantId, runId }, outcome);
  }

  /** The same refusals as a run (quota included), then a Queued run row of `kind` and its job. */
  async function admitAndQueue(
    caller: Caller,
    request: StartRunRequest,
    run: { kind: 'Async' | 'Scheduled'; labels: Record<string, string>; maxAttempts: number },
  ): Promise<RunRow> {
    const { definition, version } = await deps.preparation.prepare(caller, request, { admit: true, tenant: false });
    const payload: QueuedRunPayload = { caller, request };
    const row = await deps.jobs.enqueue(
      caller.tenantId,
      queuedRun(caller, { agentName: definition.name, agentVersion: version, sessionId: request.sessionId ?? null, ...run }),
      { payload, lane: laneOf(deps.settings, QUEUED_RUN_HANDLER_KEY), maxAttempts: run.maxAttempts },
    );
    wakeWorkers(row.id);
    return row;
  }

  /** The job is committed: the wake-up is a hint (workers poll anyway), and its failure must not fail the request. */
  function wakeWorkers(runId: string) {
    deps.pubsub
      .publish(channels.jobs(), { runId })
      .catch((error) => deps.logger.warn({ err: error, runId }, 'job wake-up not sent; workers find the job at their next poll'));
  }

  return {
    async enqueue(caller: Caller, request: StartRunRequest): Promise<RunRow> {
      if (!deps.settings.AsyncRun.Enabled) throw new HangarError('notImplemented', 'queued runs are switched off (AsyncRun:Enabled)');
      return admitAndQueue(caller, request, {
        kind: 'Async',
        labels: caller.labels ?? {},
        maxAttempts: deps.settings.AsyncRun.MaxAttempts,
      });
    },

    /** A schedule's run asked for now (its trigger route): admitted like a queued run, tried up to Scheduling:MaxAttempts times. */
    enqueueScheduled: (caller: Caller, request: StartRunRequest, labels: Record<string, string>) =>
      admitAndQueue(caller, request, { kind: 'Scheduled', labels, maxAttempts: deps.settings.Scheduling.MaxAttempts }),

    wakeWorkers,

    /** Executes a leased job's run; a refusal now (the agent was deleted meanwhile) fails the run. */
    async runQueued(job: { runId: string; payload: unknown }, signal: AbortSignal, humanWait?: HumanWait): Promise<RunRow | undefined> {
      const { caller, request, admitQueued } = job.payload as QueuedRunPayload;
      let last: RunRow | undefined;
      try {
        for await (const update of deps.execution.execute(caller, request, { signal, queuedRunId: job.runId, admitQueued, humanWait })) {
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
    abandonQueued: (job: { tenantId: string; runId: string; maxAttempts: number }) =>
      failUnstarted(
        job.tenantId,
        job.runId,
        'worker_lost',
        `the workers executing this queued run stopped ${job.maxAttempts} times (MaxAttempts)`,
      ),
  };
}

export type QueuedRuns = ReturnType<typeof createQueuedRuns>;

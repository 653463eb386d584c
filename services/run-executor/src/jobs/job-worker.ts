import { randomUUID } from 'node:crypto';
import type { Logger } from '@hangar/platform';
import type { HumanWait } from '../approvals/approvals.service.js';
import type { Subscription } from '@hangar/messaging';
import { channels, type TypedPubSub } from '../events/channels.js';
import type { QueuedRuns } from './queued-runs.service.js';
import type { JobRepository, LeasedJob } from './job.repository.js';
import { JobHandedBack } from '../runs/run-interruption.js';

export interface JobWorkerSettings {
  pollIntervalMs: number;
  leaseMs: number;
  maxConcurrentJobs: number;
  /** `AsyncRun:MaxAttempts`, for jobs queued before each job carried its own. */
  maxAttempts: number;
  /** `Scheduling:Lanes`: the lanes this worker leases from; null for every lane. */
  lanes: string[] | null;
  /** `Scheduling:MaxConcurrentJobsPerLane`: lanes with a budget of their own; the others share `maxConcurrentJobs`. */
  maxConcurrentJobsPerLane: Record<string, number>;
  /** `Drain:Timeout`: how long a stop waits for the runs it holds before handing their jobs back. */
  stopTimeoutMs: number;
}

/**
 * Executes queued runs. Jobs are leased with `FOR UPDATE SKIP LOCKED`, so several workers share
 * one table; a lease is renewed every third of its duration while the run goes on, and a lease
 * that expires (its worker died) is taken over by the next worker that polls. A run waiting for
 * people (approvals) keeps its lease but gives its slot back; once decided, it goes on as soon as
 * a slot of its lane is free, before any new job is leased.
 *
 * A worker that stops hands back at once the jobs whose runs wait for people (a decision may take
 * a day), lets the others run until its deadline, then hands back those still going: each goes
 * back to the queue with its attempt, for another instance to execute again.
 */
export function createJobWorker(deps: {
  repository: JobRepository;
  queued: Pick<QueuedRuns, 'runQueued' | 'abandonQueued'>;
  pubsub: TypedPubSub;
  logger: Logger;
  settings: JobWorkerSettings;
}) {
  const { repository, queued, logger, settings } = deps;
  const owner = `worker-${randomUUID()}`;
  const inFlight = new Set<Promise<void>>();
  const runningByLane = new Map<string, number>();
  const ownBudget = Object.keys(settings.maxConcurrentJobsPerLane);
  const leases = (lane: string) => settings.lanes === null || settings.lanes.includes(lane);
  const running = (lanes: (lane: string) => boolean) =>
    [...runningByLane].reduce((sum, [lane, count]) => sum + (lanes(lane) ? count : 0), 0);
  const hasRoom = (lane: string) =>
    ownBudget.includes(lane)
      ? (runningByLane.get(lane) ?? 0) < settings.maxConcurrentJobsPerLane[lane]
      : running((other) => !ownBudget.includes(other)) < settings.maxConcurrentJobs;
  const occupy = (lane: string) => runningByLane.set(lane, (runningByLane.get(lane) ?? 0) + 1);
  /** Decided runs waiting for a slot of their lane, first come first served. */
  const resuming: Array<{ lane: string; jobId: string; resume: () => void }> = [];
  /** The jobs this worker holds: how to stop each, and whether its run waits for people. */
  const holding = new Map<string, { controller: AbortController; waitingForPeople: () => boolean }>();

  /** Lets decided runs take the slots that are free, first come first served (not while a lease is being taken). */
  function admitResuming() {
    for (let index = 0; index < resuming.length && !polling;) {
      const waiting = resuming[index];
      if (!hasRoom(waiting.lane)) {
        index++;
        continue;
      }
      resuming.splice(index, 1);
      occupy(waiting.lane);
      waiting.resume();
    }
  }

  function vacate(lane: string) {
    runningByLane.set(lane, runningByLane.get(lane)! - 1);
    admitResuming();
    void poll();
  }

  /** A slot of the lane for a decided run: at once when one is free and nobody waits before it, else its turn. */
  function takeSlot(lane: string, jobId: string): Promise<void> {
    if (!polling && hasRoom(lane) && !resuming.some((waiting) => waiting.lane === lane)) {
      occupy(lane);
      return Promise.resolve();
    }
    return new Promise<void>((resume) => resuming.push({ lane, jobId, resume }));
  }

  /**
   * One job's slot: given back while its run waits for people, taken again (waiting its turn) once
   * decided. Child runs waiting side by side share it: it is given back once and taken back once.
   */
  function slotOf(lane: string, jobId: string) {
    let held = true;
    let retaking: Promise<void> | undefined;
    const humanWait: HumanWait = {
      waiting() {
        if (!held || retaking) return;
        held = false;
        vacate(lane);
      },
      resumed() {
        if (held) return Promise.resolve();
        retaking ??= takeSlot(lane, jobId).then(() => {
          held = true;
          retaking = undefined;
        });
        return retaking;
      },
    };
    // A run that ends while its slot is being taken back gives it back once taken.
    const release = () => (held ? vacate(lane) : void retaking?.then(() => vacate(lane)));
    return { humanWait, release, waitingForPeople: () => !held };
  }

  /** What this worker may lease now: each budgeted lane up to its own limit, the other lanes together up to MaxConcurrentJobs. */
  async function leaseWithinBudgets() {
    const leased = [];
    for (const [lane, limit] of Object.entries(settings.maxConcurrentJobsPerLane)) {
      if (!leases(lane)) continue;
      leased.push(...(await repository.leaseJobs(owner, limit - (runningByLane.get(lane) ?? 0), settings.leaseMs, { only: [lane] })));
    }
    const shared = settings.maxConcurrentJobs - running((lane) => !ownBudget.includes(lane));
    const only = settings.lanes?.filter((lane) => !ownBudget.includes(lane));
    leased.push(...(await repository.leaseJobs(owner, shared, settings.leaseMs, { only, except: ownBudget })));
    return leased;
  }
  let stopped = false;
  let polling = false;
  let timer: NodeJS.Timeout | undefined;
  let subscription: Subscription | undefined;

  async function work(job: LeasedJob, humanWait: HumanWait, controller: AbortController) {
    const maxAttempts = job.maxAttempts ?? settings.maxAttempts;
    if (job.attempts > maxAttempts) {
      await queued.abandonQueued({ ...job, maxAttempts });
      await repository.finishJob(job.id, 'failed', 'attempts exhausted');
      return;
    }
    const heartbeat = setInterval(
      () => {
        repository.heartbeat(job.id, owner, settings.leaseMs).then(
          (held) => {
            if (!held) controller.abort(); // another worker took the job over
          },
          (error) => logger.warn({ err: error, jobId: job.id }, 'lease heartbeat failed'),
        );
      },
      Math.max(100, Math.floor(settings.leaseMs / 3)),
    );
    try {
      const run = await queued.runQueued(job, controller.signal, humanWait);
      if (controller.signal.reason instanceof JobHandedBack) await handBack(job);
      else await repository.finishJob(job.id, run?.status === 'Failed' ? 'failed' : 'done', run?.errorMessage ?? null);
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function handBack(job: LeasedJob) {
    await repository.releaseJob(job.id, owner);
    // Another instance's worker takes it at once rather than at its next poll.
    deps.pubsub
      .publish(channels.jobs(), { runId: job.runId })
      .catch((error) => logger.warn({ err: error, jobId: job.id }, 'job wake-up not sent; workers find the job at their next poll'));
  }

  /** Stops the runs of the jobs `which` picks; their jobs go back to the queue once each run has stopped. */
  function handBackJobs(which: (job: { waitingForPeople: () => boolean }) => boolean) {
    for (const [jobId, held] of holding) {
      if (!which(held)) continue;
      held.controller.abort(new JobHandedBack());
      // A decided run waiting for a slot takes one now, to see that it was stopped.
      const index = resuming.findIndex((waiting) => waiting.jobId === jobId);
      if (index >= 0) {
        const [waiting] = resuming.splice(index, 1);
        occupy(waiting.lane);
        waiting.resume();
      }
    }
  }

  async function poll() {
    if (stopped || polling) return;
    polling = true;
    try {
      for (const job of await leaseWithinBudgets()) {
        occupy(job.lane);
        const slot = slotOf(job.lane, job.id);
        const controller = new AbortController();
        holding.set(job.id, { controller, waitingForPeople: slot.waitingForPeople });
        const execution: Promise<void> = work(job, slot.humanWait, controller)
          .catch((error) => logger.error({ err: error, jobId: job.id }, 'queued run failed'))
          .finally(() => {
            holding.delete(job.id);
            inFlight.delete(execution);
            slot.release();
            void poll();
          });
        inFlight.add(execution);
      }
    } catch (error) {
      logger.warn({ err: error }, 'leasing jobs failed');
    } finally {
      polling = false;
      admitResuming();
    }
  }

  /**
   * Stops leasing and lets the runs it holds finish until `deadline`; jobs whose runs wait for
   * people are handed back at once, those still going at the deadline then.
   */
  async function drain(deadline: AbortSignal) {
    stopped = true;
    clearInterval(timer);
    const handBackAll = () => handBackJobs(() => true);
    deadline.addEventListener('abort', handBackAll, { once: true });
    try {
      await subscription?.unsubscribe();
      subscription = undefined;
      handBackJobs((held) => held.waitingForPeople());
      if (deadline.aborted) handBackAll();
      await Promise.all(inFlight);
    } finally {
      deadline.removeEventListener('abort', handBackAll);
    }
  }

  return {
    owner,
    async start() {
      // Wake-ups are a hint: without pub/sub the worker still polls.
      subscription = await deps.pubsub
        .subscribe(channels.jobs(), () => void poll())
        .catch((error) => void logger.warn({ err: error }, 'job wake-ups unavailable; polling only'));
      timer = setInterval(() => void poll(), settings.pollIntervalMs);
      void poll();
    },
    drain,
    /** A drain bounded by `Drain:Timeout`: a stop never waits on a run for longer. */
    stop: () => drain(AbortSignal.timeout(settings.stopTimeoutMs)),
  };
}

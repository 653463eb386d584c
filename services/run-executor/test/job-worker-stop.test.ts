import { createLogger } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import type { HumanWait } from '../src/approvals/approvals.service.js';
import type { TypedPubSub } from '../src/events/channels.js';
import type { JobRepository, LeasedJob } from '../src/jobs/job.repository.js';
import { createJobWorker } from '../src/jobs/job-worker.js';
import type { QueuedRuns } from '../src/jobs/queued-runs.service.js';

/** A stopping worker never waits on a run for ever: its jobs go back to the queue for another instance. */

const job = (id: string): LeasedJob => ({ id, tenantId: 't1', runId: id, lane: 'default', payload: {}, attempts: 1, maxAttempts: null });

function harness(queue: LeasedJob[], waitsForPeople: Set<string>, stopTimeoutMs: number) {
  const released: string[] = [];
  const finished: string[] = [];
  const started = new Set<string>();
  const repository = strictFake<JobRepository>('jobs', {
    leaseJobs: async (_owner: string, limit: number) => queue.splice(0, Math.max(0, limit)),
    heartbeat: async () => true,
    finishJob: async (jobId: string) => void finished.push(jobId),
    releaseJob: async (jobId: string) => void released.push(jobId),
  });
  // A run that goes on until it is stopped, waiting for people or not; it stops as soon as its signal aborts.
  const queued = strictFake<Pick<QueuedRuns, 'runQueued' | 'abandonQueued'>>('queued', {
    async runQueued(leased: { runId: string }, signal: AbortSignal, humanWait?: HumanWait) {
      started.add(leased.runId);
      if (waitsForPeople.has(leased.runId)) humanWait!.waiting();
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return undefined;
    },
  });
  const pubsub = strictFake<TypedPubSub>('pubsub', {
    subscribe: async () => ({ unsubscribe: async () => {} }),
    publish: async () => {},
  } as never);
  const worker = createJobWorker({
    repository,
    queued,
    pubsub,
    logger: createLogger({ name: 'job-worker-stop-test', level: 'silent' }),
    settings: {
      pollIntervalMs: 10,
      leaseMs: 60_000,
      maxConcurrentJobs: 2,
      maxAttempts: 3,
      lanes: null,
      maxConcurrentJobsPerLane: {},
      stopTimeoutMs,
    },
  });
  return { worker, released, finished, started };
}

describe('a stopping job worker', () => {
  it('hands back at once a job whose run awaits approval, and stops within Drain:Timeout', async () => {
    const { worker, released, finished, started } = harness([job('awaiting')], new Set(['awaiting']), 10_000);
    await worker.start();
    await expect.poll(() => started.has('awaiting'), { timeout: 2000 }).toBe(true);
    const before = performance.now();
    await worker.stop();
    expect(performance.now() - before).toBeLessThan(1000);
    expect(released).toEqual(['awaiting']);
    expect(finished).toEqual([]);
  });

  it('lets a running run go on until the deadline, then hands its job back', async () => {
    const { worker, released, started } = harness([job('long')], new Set(), 300);
    await worker.start();
    await expect.poll(() => started.has('long'), { timeout: 2000 }).toBe(true);
    const before = performance.now();
    await worker.stop();
    expect(performance.now() - before).toBeGreaterThanOrEqual(250);
    expect(released).toEqual(['long']);
  });

  it('takes no new job once draining', async () => {
    const queue = [job('first')];
    const { worker, started } = harness(queue, new Set(), 5000);
    await worker.start();
    await expect.poll(() => started.has('first'), { timeout: 2000 }).toBe(true);
    const deadline = new AbortController();
    const drained = worker.drain(deadline.signal);
    queue.push(job('late'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started.has('late')).toBe(false);
    deadline.abort();
    await drained;
    expect(queue).toEqual([job('late')]);
  });
});

import { createLogger } from '@hangar/platform';
import { afterEach, describe, expect, it } from 'vitest';
import type { HumanWait } from '../src/approvals/approvals.service.js';
import type { TypedPubSub } from '../src/events/channels.js';
import type { JobRepository, LeasedJob } from '../src/jobs/job.repository.js';
import { createJobWorker } from '../src/jobs/job-worker.js';
import type { QueuedRuns } from '../src/jobs/queued-runs.service.js';
import { strictFake } from '@hangar/testing';

/** The worker's slots (Scheduling:MaxConcurrentJobs): a run waiting for people gives its slot back, and waits its turn to take one again. */

const job = (id: string): LeasedJob => ({ id, tenantId: 't1', runId: id, lane: 'default', payload: {}, attempts: 1, maxAttempts: null });
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

interface Scripted {
  /** Resolves the run's approval wait. */
  decide(): void;
  /** Ends the run. */
  finish(): void;
  /** Ends the run while it waits for people (a cancel). */
  cancel(): void;
}

function harness(queue: LeasedJob[], waitsForPeople: Set<string>) {
  let executing = 0;
  let mostAtOnce = 0;
  const runs = new Map<string, Scripted>();
  const executingNow = () => executing;
  const repository = strictFake<JobRepository>('jobs', {
    leaseJobs: async (_owner: string, limit: number) => queue.splice(0, Math.max(0, limit)),
    heartbeat: async () => true,
    finishJob: async () => {},
  });
  const queued = strictFake<Pick<QueuedRuns, 'runQueued' | 'abandonQueued'>>('queued', {
    async runQueued(leased: { runId: string }, _signal: AbortSignal, humanWait?: HumanWait) {
      let decide!: () => void;
      let cancel!: (reason: Error) => void;
      let finish!: () => void;
      const decided = new Promise<void>((resolve, reject) => ((decide = resolve), (cancel = reject)));
      const finished = new Promise<void>((resolve) => (finish = resolve));
      runs.set(leased.runId, { decide, finish, cancel: () => cancel(new Error('canceled')) });
      executing += 1;
      mostAtOnce = Math.max(mostAtOnce, executing);
      if (waitsForPeople.has(leased.runId)) {
        executing -= 1;
        humanWait!.waiting();
        if (
          !(await decided.then(
            () => true,
            () => false,
          ))
        )
          return undefined;
        await humanWait!.resumed();
        executing += 1;
        mostAtOnce = Math.max(mostAtOnce, executing);
      }
      await finished;
      executing -= 1;
      return undefined;
    },
  });
  const pubsub = strictFake<TypedPubSub>('pubsub', { subscribe: async () => ({ unsubscribe: async () => {} }) } as never);
  const worker = createJobWorker({
    repository,
    queued,
    pubsub,
    logger: createLogger({ name: 'job-worker-test', level: 'silent' }),
    settings: {
      pollIntervalMs: 10,
      leaseMs: 60_000,
      maxConcurrentJobs: 2,
      maxAttempts: 3,
      lanes: null,
      maxConcurrentJobsPerLane: {},
      stopTimeoutMs: 5000,
    },
  });
  return { worker, runs, executingNow, mostAtOnce: () => mostAtOnce };
}

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

describe('job worker slots', () => {
  it('leases a new job while two runs wait for people, and resumes a decided run only when a slot is free', async () => {
    const queue = [job('a1'), job('a2'), job('b1'), job('b2')];
    const { worker, runs, executingNow, mostAtOnce } = harness(queue, new Set(['a1', 'a2']));
    await worker.start();
    stop = async () => {
      for (const run of runs.values()) {
        run.decide();
        run.finish();
      }
      await worker.stop();
    };
    // a1 and a2 wait for people: their slots go to b1 and b2.
    await expect.poll(() => [...runs.keys()].sort(), { timeout: 2000 }).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(executingNow()).toBe(2);

    // Both decided while b1 and b2 hold the slots: neither resumes yet.
    runs.get('a1')!.decide();
    runs.get('a2')!.decide();
    for (let index = 0; index < 10; index++) await tick();
    expect(executingNow()).toBe(2);

    // b1 ends: a1 (decided first) takes its slot; then b2 ends and a2 goes on.
    runs.get('b1')!.finish();
    await expect.poll(executingNow, { timeout: 2000 }).toBe(2);
    runs.get('b2')!.finish();
    await expect.poll(executingNow, { timeout: 2000 }).toBe(2);
    runs.get('a1')!.finish();
    runs.get('a2')!.finish();
    await expect.poll(executingNow, { timeout: 2000 }).toBe(0);
    expect(mostAtOnce()).toBe(2);
    // Side-by-side waits gave each slot back once and took it back once: both slots are free again.
    queue.push(job('c1'), job('c2'), job('c3'));
    await expect.poll(() => ['c1', 'c2'].every((id) => runs.has(id)), { timeout: 2000 }).toBe(true);
    expect(runs.has('c3')).toBe(false);
    expect(executingNow()).toBe(2);
  });

  it('a run that ends while waiting for people (canceled) does not give its slot back twice', async () => {
    const queue = [job('w1'), job('n1'), job('n2'), job('n3')];
    const { worker, runs, executingNow, mostAtOnce } = harness(queue, new Set(['w1']));
    await worker.start();
    stop = async () => {
      for (const run of runs.values()) run.finish();
      await worker.stop();
    };
    await expect.poll(() => [...runs.keys()].sort(), { timeout: 2000 }).toEqual(['n1', 'n2', 'w1']);
    runs.get('w1')!.cancel();
    for (let index = 0; index < 10; index++) await tick();
    // A second give-back would have let n3 start beside n1 and n2.
    expect([...runs.keys()]).not.toContain('n3');
    runs.get('n1')!.finish();
    await expect.poll(() => runs.has('n3'), { timeout: 2000 }).toBe(true);
    expect(executingNow()).toBe(2);
    expect(mostAtOnce()).toBe(2);
  });
});

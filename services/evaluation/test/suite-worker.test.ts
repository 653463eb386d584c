import { HangarError, notFound, type Logger } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { CaseRun, CaseRunner, CaseRunRequest } from '../src/clients/ports.js';
import type { Aggregate, CaseResult, EvalCase } from '../src/suites/eval.model.js';
import type { ClaimedSuiteRun, EvaluationRepository } from '../src/suites/eval.repository.js';
import { createSuiteWorker, type SuiteWorker, type SuiteWorkerSettings } from '../src/suites/suite-worker.js';

const SETTINGS: SuiteWorkerSettings = {
  pollIntervalMs: 10,
  leaseMs: 3_000,
  maxConcurrentSuiteRuns: 2,
  caseConcurrency: 2,
  caseTimeoutMs: 200,
  retryAfterMs: 5_000,
  maxFailures: 3,
};
const caller = { tenantId: 'acme', actor: 'tester' };
const logger = strictFake<Logger>('logger', { info: () => {}, warn: () => {} });
const cases: EvalCase[] = ['one', 'two', 'three'].map((input, index) => ({
  id: `case-${index + 1}`,
  input,
  parameters: { tone: 'dry' },
  expected: input.toUpperCase(),
  graders: [{ kind: 'exact' }],
}));
const answered = (output: string): CaseRun => ({
  runId: `run-${output}`,
  completed: true,
  output,
  inputTokens: 5,
  outputTokens: 2,
  cost: 0.25,
  latencyMs: 12,
});

/** One claimable suite run, with what the worker did to it. */
function store(claimed: Partial<ClaimedSuiteRun> = {}, done: Map<number, CaseResult> = new Map()) {
  const run: ClaimedSuiteRun = {
    id: 'suite-run',
    tenantId: 'acme',
    cases,
    agentName: 'student',
    agentVersion: 2,
    caller,
    failures: 0,
    error: null,
    ...claimed,
  };
  const state = {
    claimable: true,
    /** False once the lease is gone: taken over, or the run canceled on another instance. */
    held: true,
    results: done,
    finished: undefined as { status: string; aggregate: Aggregate; error: string | null } | undefined,
    released: [] as Array<{ error: string; afterMs: number } | undefined>,
  };
  const repository = strictFake<EvaluationRepository>('repository', {
    async claimRuns() {
      if (!state.claimable) return [];
      state.claimable = false;
      return [run];
    },
    heartbeat: async () => state.held,
    donePositions: async () => new Set(state.results.keys()),
    async storeResult(_id, _owner, position, result) {
      if (!state.held) return false;
      if (!state.results.has(position)) state.results.set(position, result);
      return true;
    },
    results: async () => [...state.results.entries()].sort(([a], [b]) => a - b).map(([, result]) => result),
    async finish(_id, _owner, status, aggregate, error) {
      state.finished = { status, aggregate, error };
      return true;
    },
    async release(_id, _owner, failed) {
      state.released.push(failed);
    },
  });
  return { repository, state };
}

let worker: SuiteWorker | undefined;
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});

const until = async (condition: () => boolean) => {
  for (const deadline = Date.now() + 3_000; !condition(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() > deadline) throw new Error('the worker never got there');
  }
};

function start(repository: EvaluationRepository, run: CaseRunner['run'], settings = SETTINGS) {
  worker = createSuiteWorker({ repository, runner: { run }, logger, settings });
  worker.start();
}

describe('suite worker', () => {
  it('runs the cases without a result (pinned version, parameters, as its caller), grades them and completes with the aggregate', async () => {
    const { repository, state } = store({}, new Map([[0, { caseId: 'case-1', status: 'Passed', score: 1 } as CaseResult]]));
    const asked: CaseRunRequest[] = [];
    start(repository, async (who, request) => {
      expect(who).toEqual(caller);
      asked.push(request);
      return answered(request.input === 'two' ? 'TWO' : 'wrong');
    });
    await until(() => state.finished !== undefined);
    expect(asked.map((request) => request.input).sort()).toEqual(['three', 'two']);
    expect(asked[0]).toMatchObject({ agentName: 'student', agentVersion: 2, parameters: { tone: 'dry' } });
    expect(state.results.get(1)).toMatchObject({
      caseId: 'case-2',
      status: 'Passed',
      score: 1,
      runId: 'run-TWO',
      cost: 0.25,
      latencyMs: 12,
    });
    expect(state.results.get(2)).toMatchObject({ caseId: 'case-3', status: 'Failed', score: 0, output: 'wrong' });
    expect(state.finished).toMatchObject({ status: 'Completed', error: null, aggregate: { cases: 3, passed: 2, failed: 1 } });
  });

  it('records a refused run, a failed run and a run over its time as errors, and still completes', async () => {
    const { repository, state } = store();
    start(repository, async (_caller, request, signal) => {
      if (request.input === 'one') throw notFound('version 2 of agent "student" not found');
      if (request.input === 'two') return { ...answered(''), completed: false, error: 'provider_error: upstream 500' };
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    await until(() => state.finished !== undefined);
    expect([...state.results.values()].map((result) => [result.status, result.error])).toEqual([
      ['Error', 'version 2 of agent "student" not found'],
      ['Error', 'provider_error: upstream 500'],
      ['Error', 'the run took longer than 200 ms'],
    ]);
    expect(state.finished).toMatchObject({ status: 'Completed', aggregate: { errored: 3, passRate: 0 } });
  });

  it('gives the suite run back, counted, when the run executor is away, without finishing it', async () => {
    const { repository, state } = store();
    start(repository, async () => {
      throw new HangarError('unavailable', 'run executor unavailable', {}, 'service_unavailable');
    });
    await until(() => state.released.length > 0);
    expect(state.released[0]).toEqual({ error: 'run executor unavailable', afterMs: SETTINGS.retryAfterMs });
    expect(state.finished).toBeUndefined();
    expect(state.results.size).toBe(0);
  });

  it('fails a suite run given back after errors maxFailures times, running nothing', async () => {
    const { repository, state } = store({ failures: 3, error: 'run executor unavailable' });
    start(repository, strictFake<CaseRunner>('runner', {}).run);
    await until(() => state.finished !== undefined);
    expect(state.finished).toMatchObject({ status: 'Failed', error: 'given up after 3 attempts; the last: run executor unavailable' });
  });

  it('gives its suite runs back at once when it stops, uncounted', async () => {
    const { repository, state } = store();
    let started = 0;
    start(
      repository,
      (_caller, _request, signal) => {
        started++;
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      },
      { ...SETTINGS, caseTimeoutMs: 60_000 },
    );
    await until(() => started === 2);
    await worker!.stop();
    expect(state.released).toEqual([undefined]);
    expect(state.finished).toBeUndefined();
  });

  /** A runner whose case runs answer only when their signal aborts, as runs ended Canceled. */
  const hanging = () => {
    const calls = { asked: [] as string[], aborted: [] as string[] };
    const run: CaseRunner['run'] = (_caller, request, signal) => {
      calls.asked.push(request.input);
      // As the run executor answers: the case's run ended Canceled (an answer, not a throw), so
      // only the worker's own check keeps it from being stored as a result.
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          calls.aborted.push(request.input);
          resolve({ ...answered(''), completed: false, error: 'canceled: the run was canceled' });
        }),
      );
    };
    return { run, calls };
  };

  it('stops the cases of a canceled suite run at once, keeping no result of them and neither finishing nor giving it back', async () => {
    const { repository, state } = store();
    const { run, calls } = hanging();
    start(repository, run, { ...SETTINGS, caseTimeoutMs: 60_000 });
    await until(() => calls.asked.length === 2);
    worker!.stopCanceled('suite-run');
    await until(() => calls.aborted.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The third case never started.
    expect(calls.asked.sort()).toEqual(['one', 'two']);
    expect(state.results.size).toBe(0);
    expect(state.finished).toBeUndefined();
    expect(state.released).toEqual([]);
  });

  it('stops the cases of a suite run whose lease a heartbeat finds gone (canceled on another instance)', async () => {
    const { repository, state } = store();
    const { run, calls } = hanging();
    start(repository, run, { ...SETTINGS, leaseMs: 60, caseTimeoutMs: 60_000 });
    await until(() => calls.asked.length === 2);
    state.held = false;
    await until(() => calls.aborted.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.asked.sort()).toEqual(['one', 'two']);
    expect(state.results.size).toBe(0);
    expect(state.finished).toBeUndefined();
  });
});

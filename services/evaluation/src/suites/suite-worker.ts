import { randomUUID } from 'node:crypto';
import { createClaimLoop, HangarError, type Logger } from '@hangar/platform';
import type { CaseRun, CaseRunner } from '../clients/ports.js';
import { aggregateOf, type CaseResult, type EvalCase, type GraderResult } from './eval.model.js';
import type { ClaimedSuiteRun, EvaluationRepository } from './eval.repository.js';
import { grade, judgePrompt, parseJudgeReply, type Judge } from './graders.js';

export interface SuiteWorkerSettings {
  pollIntervalMs: number;
  leaseMs: number;
  /** Suite runs one instance executes at a time. */
  maxConcurrentSuiteRuns: number;
  /** Cases of one suite run whose runs go on at a time. */
  caseConcurrency: number;
  /** How long one case's run may take before the case is an error. */
  caseTimeoutMs: number;
  /** How long a suite run given back after an error waits before an instance takes it again. */
  retryAfterMs: number;
  /** Give-backs after errors after which a suite run fails. */
  maxFailures: number;
}

/** A grader that could not grade (a judge that failed or gave no score): the case is an error, not a failure. */
class GradingError extends Error {}

/** A case's outcome when its run did not come to an answer to grade. */
const erred = (evalCase: EvalCase, error: string, run?: CaseRun): CaseResult => ({
  caseId: evalCase.id,
  input: evalCase.input,
  expected: evalCase.expected,
  status: 'Error',
  score: 0,
  runId: run?.runId,
  output: run?.output ?? '',
  graders: [],
  cost: run?.cost ?? null,
  judgeCost: null,
  inputTokens: run?.inputTokens ?? 0,
  outputTokens: run?.outputTokens ?? 0,
  latencyMs: run?.latencyMs ?? 0,
  error,
});

/** A refusal of the run itself (unknown agent version, quota, content guard): the case's result, not a reason to retry. */
const isRefusal = (error: unknown) => error instanceof HangarError && error.status < 500;

/**
 * Executes queued suite runs. A suite run is leased (`FOR UPDATE SKIP LOCKED`), so any instance
 * may take it, renewed while it goes on, and taken over by the next instance that polls once its
 * holder died; cases with a stored result are not run again. A suite run whose run executor is away
 * is given back and retried after `retryAfterMs`, and fails after `maxFailures` such give-backs.
 */
export function createSuiteWorker(deps: {
  repository: EvaluationRepository;
  runner: CaseRunner;
  logger: Logger;
  settings: SuiteWorkerSettings;
}) {
  const { repository, runner, logger, settings } = deps;
  const owner = randomUUID();
  /** The suite runs this instance executes, each stopped by its controller when it is canceled. */
  const executing = new Map<string, AbortController>();

  async function runCase(claimed: ClaimedSuiteRun, evalCase: EvalCase, signal: AbortSignal): Promise<CaseResult> {
    const timeout = AbortSignal.timeout(settings.caseTimeoutMs);
    // What the case's judges cost, beside its own run: the price of grading it.
    let judgeCost: number | null = null;
    const judge: Judge = async (grader, judged, output) => {
      const verdict = await runner.run(
        claimed.caller,
        { agentName: grader.agent, input: judgePrompt(grader, judged, output), parameters: {} },
        signal,
      );
      if (verdict.cost !== null) judgeCost = (judgeCost ?? 0) + verdict.cost;
      if (!verdict.completed) throw new GradingError(`judge "${grader.agent}" failed: ${verdict.error}`);
      const parsed = parseJudgeReply(verdict.output);
      if (!parsed) throw new GradingError(`judge "${grader.agent}" gave no score`);
      return { ...parsed, runId: verdict.runId };
    };
    let run: CaseRun;
    try {
      const request = {
        agentName: claimed.agentName,
        agentVersion: claimed.agentVersion ?? undefined,
        input: evalCase.input,
        parameters: evalCase.parameters,
      };
      run = await runner.run(claimed.caller, request, AbortSignal.any([signal, timeout]));
    } catch (error) {
      if (signal.aborted) throw error;
      if (timeout.aborted) return erred(evalCase, `the run took longer than ${settings.caseTimeoutMs} ms`);
      if (isRefusal(error)) return erred(evalCase, (error as Error).message);
      throw error;
    }
    if (!run.completed) return erred(evalCase, run.error ?? 'the run failed', run);
    let graders: GraderResult[];
    try {
      graders = await Promise.all(evalCase.graders.map((grader) => grade(grader, evalCase, run.output, judge)));
    } catch (error) {
      if (error instanceof GradingError || isRefusal(error)) return { ...erred(evalCase, (error as Error).message, run), judgeCost };
      throw error;
    }
    return {
      caseId: evalCase.id,
      input: evalCase.input,
      expected: evalCase.expected,
      status: graders.every((grader) => grader.passed) ? 'Passed' : 'Failed',
      score: graders.reduce((sum, grader) => sum + grader.score, 0) / graders.length,
      runId: run.runId,
      output: run.output,
      graders,
      cost: run.cost,
      judgeCost,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      latencyMs: Math.round(run.latencyMs),
    };
  }

  async function execute(claimed: ClaimedSuiteRun, stop: AbortSignal): Promise<void> {
    // Lost: the lease is no longer this instance's (another took it over, or the run was canceled).
    const lost = new AbortController();
    executing.set(claimed.id, lost);
    // The first case that cannot go on (the run executor away) stops the others: the run is given back whole.
    const halt = new AbortController();
    const signal = AbortSignal.any([stop, lost.signal, halt.signal]);
    const heartbeat = setInterval(() => {
      repository
        .heartbeat(claimed.id, owner, settings.leaseMs)
        .then((held) => held || lost.abort())
        .catch((error) => logger.warn({ err: error, suiteRunId: claimed.id }, 'suite run lease could not be renewed'));
    }, settings.leaseMs / 3);
    const logLeft = (when: string) =>
      logger.info({ suiteRunId: claimed.id }, `suite run left ${when}: it was canceled, or another instance took its lease over`);
    try {
      if (claimed.failures >= settings.maxFailures) {
        const results = await repository.results(claimed.id);
        const error = `given up after ${claimed.failures} attempts; the last: ${claimed.error}`;
        await repository.finish(claimed.id, owner, 'Failed', aggregateOf(results, claimed.cases.length), error);
        return;
      }
      const done = await repository.donePositions(claimed.id);
      const pending = claimed.cases.flatMap((evalCase, position) => (done.has(position) ? [] : [{ evalCase, position }]));
      let next = 0;
      const lane = async () => {
        while (next < pending.length && !signal.aborted) {
          const { evalCase, position } = pending[next++];
          try {
            const result = await runCase(claimed, evalCase, signal);
            // A case stopped by the cancel of its suite run has no result to keep; nor has one
            // whose run was canceled or taken over while it was graded (found here, not at the next heartbeat).
            if (lost.signal.aborted) return;
            if (!(await repository.storeResult(claimed.id, owner, position, result))) lost.abort();
          } catch (error) {
            halt.abort(error);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(settings.caseConcurrency, pending.length) }, lane));
      if (signal.aborted) throw signal.reason;
      const results = await repository.results(claimed.id);
      if (await repository.finish(claimed.id, owner, 'Completed', aggregateOf(results, claimed.cases.length), null))
        logger.info({ suiteRunId: claimed.id, cases: claimed.cases.length }, 'suite run completed');
      else logLeft('at its end');
    } catch (error) {
      if (lost.signal.aborted) {
        logLeft('while its cases ran');
        return;
      }
      const failed = stop.aborted ? undefined : { error: (error as Error).message, afterMs: settings.retryAfterMs };
      if (failed) logger.warn({ err: error, suiteRunId: claimed.id }, `suite run given back; retried in ${settings.retryAfterMs} ms`);
      await repository
        .release(claimed.id, owner, failed)
        .catch((releaseError) =>
          logger.warn({ err: releaseError, suiteRunId: claimed.id }, 'suite run could not be given back; its lease expires instead'),
        );
    } finally {
      clearInterval(heartbeat);
      // A later execution of the same run on this instance (it took the run back) has its own entry.
      if (executing.get(claimed.id) === lost) executing.delete(claimed.id);
    }
  }

  const loop = createClaimLoop({
    what: 'suite runs',
    claim: (free) => repository.claimRuns(owner, settings.leaseMs, free),
    execute,
    maxConcurrent: settings.maxConcurrentSuiteRuns,
    pollIntervalMs: settings.pollIntervalMs,
    logger,
  });

  return {
    wake: loop.wake,
    /** Stops the cases of a suite run this instance executes, once it was canceled. */
    stopCanceled: (id: string) => executing.get(id)?.abort(),
    start: loop.start,
    /** Stops taking suite runs and gives back those it holds, for another instance to go on with at once. */
    stop: () => loop.stop(new Error('the evaluation service stops')),
  };
}

export type SuiteWorker = ReturnType<typeof createSuiteWorker>;

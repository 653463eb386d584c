import { randomUUID } from 'node:crypto';
import { classifyError, HangarError, type Logger } from '@hangar/platform';
import type { Cancellation } from '../cancellation/cancellation.service.js';
import { createEventWriter, type EventWriterDeps } from '../events/event-writer.js';
import { retryWhileUnavailable } from '../recording.js';
import type { TreeBudget } from '../runs/model-turns.js';
import type { RunExecution } from '../runs/run-execution.js';
import { recordRunEnd } from '../runs/run-ending.js';
import { RunInterruption } from '../runs/run-interruption.js';
import { TERMINAL_STATUSES, ZERO_USAGE, type RunOutcome, type RunRow } from '../runs/run.model.js';
import type { RunRepository } from '../runs/run.repository.js';
import { asText, nextSuperStep, OutputTooLarge, renderTemplate, runOutput, stepInput } from './workflow-graph.js';
import type { WorkflowRunRow, WorkflowStep } from './workflow.model.js';
import type { WorkflowRepository } from './workflow.repository.js';

export interface WorkflowRunnerSettings {
  /** `Workflows:EnableCheckpointing`: a checkpoint after each super step, each finished step saved at once. */
  checkpointing: boolean;
  /** `Workflows:KeepCheckpointsAfterCompletion`: false drops a completed run's checkpoints. */
  keepCheckpoints: boolean;
  /** `Workflows:MaxSuperSteps`. */
  maxSuperSteps: number;
  /** `Workflows:RunTimeout`: the time a run may spend executing (not paused for a human). */
  runTimeoutMs: number;
  /** How long a canceler holds a run it ends (a lease like a worker's). */
  leaseMs: number;
}

/** A run that cannot go on: it ends Failed with this error type. */
class WorkflowFailure extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** This instance no longer holds the run (its lease expired or was taken): another goes on with it. */
class LeaseLost extends Error {
  constructor() {
    super('the workflow run lease was lost');
  }
}

/** How one lease of a run ended: the run ended, it waits for a human, or it was given back (lease lost, instance stopping). */
export type LeaseOutcome = 'ended' | 'paused' | 'given-back';

const NO_PRICES = { input: null, output: null, cachedInput: null };
// setTimeout's longest delay: a longer one fires at once.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Executes a leased workflow run from where it stands: super step after super step, the steps of
 * one concurrently. Each finished step is saved (so a super step resumed after a crash runs only
 * the rest), each finished super step checkpointed; an input step asks its question once and the
 * run is given back until every question of the super step is answered. Agent steps are child runs
 * of the workflow's run, executed by the run engine (a cancel of the workflow's run stops them).
 * Every write checks that this instance still holds the run; one that lost it stops at once.
 */
export function createWorkflowRunner(deps: {
  repository: WorkflowRepository;
  runs: Pick<RunRepository, 'get' | 'markRunning' | 'finishWithEvent' | 'finish'>;
  execution: Pick<RunExecution, 'runStep'>;
  cancellation: Pick<Cancellation, 'track'>;
  writer: EventWriterDeps;
  logger: Logger;
  settings: WorkflowRunnerSettings;
}) {
  const { repository, settings, logger } = deps;

  /** Records a run's (or a step run's) end with its terminal event; undefined when it had ended before. */
  async function finishRun(tenantId: string, runId: string, outcome: RunOutcome) {
    return retryWhileUnavailable(() => recordRunEnd(deps, { tenantId, runId }, outcome));
  }

  /** Step runs a dead holder left executing end now: their runs are gone with it, and this lease runs those steps again. */
  async function closeInterruptedSteps(run: WorkflowRunRow) {
    for (const stepRunId of await repository.interruptedSteps(run.id)) {
      await finishRun(run.tenantId, stepRunId, {
        status: 'Failed',
        usage: ZERO_USAGE,
        cost: null,
        prices: NO_PRICES,
        errorType: 'interrupted',
        errorMessage: 'the instance executing this workflow step stopped before it finished; the step runs again',
      });
    }
  }

  /**
   * Ends the run: its runs row with the terminal event first, then its own row (so a failure in
   * between leaves a run the next holder finds ended and closes, never one nobody takes).
   */
  async function endRun(
    run: WorkflowRunRow,
    owner: string,
    outcome: Pick<RunOutcome, 'status' | 'errorType' | 'errorMessage'>,
    state = run.state,
    activeMs = run.activeMs,
  ) {
    // Its output first: a reader that sees the run Completed finds its output.
    const output = outcome.status === 'Completed' ? runOutput(state) : null;
    if (!(await repository.saveState(run, owner, state, activeMs, output))) throw new LeaseLost();
    const totals = await repository.stepTotals(run.id);
    await finishRun(run.tenantId, run.id, { ...outcome, ...totals, prices: NO_PRICES });
    await repository.end(run.id, owner);
    if (outcome.status === 'Completed' && !settings.keepCheckpoints) await repository.dropCheckpoints(run.id);
  }

  /**
   * Cancels a run nobody executes now (queued, waiting for answers, or ready between holders):
   * takes it like a worker would, then ends it Canceled. False when an instance holds it.
   */
  async function cancelIdle(tenantId: string, runId: string): Promise<boolean> {
    const owner = `cancel-${randomUUID()}`;
    const run = await repository.takeIdle(tenantId, runId, owner, settings.leaseMs);
    if (!run) return false;
    await endRun(run, owner, { status: 'Canceled', errorType: null, errorMessage: null });
    return true;
  }

  async function execute(run: WorkflowRunRow, owner: string, lost: AbortSignal, stopping: AbortSignal): Promise<LeaseOutcome> {
    const target = { runId: run.id, rootRunId: run.id, tenantId: run.tenantId, agentName: run.workflow };
    const firstLease = run.status === 'Queued';
    const row = firstLease ? await deps.runs.markRunning(run.id, run.version) : await deps.runs.get(run.tenantId, run.id);
    // Its runs row ended already (a holder that died while ending it): only its own row is left to close.
    if (!row || TERMINAL_STATUSES.has(row.status)) {
      await repository.end(run.id, owner);
      return 'ended';
    }
    if (!firstLease) await closeInterruptedSteps(run);
    const events = createEventWriter(deps.writer, target, await deps.writer.events.lastSeq(run.id));
    const emit = events.emit;
    if (firstLease) void emit('run.started', { workflow: run.workflow, version: run.version, input: run.input });
    else void emit('workflow.resumed', { superStep: run.state.superStep, done: run.state.done });

    const cancel = new AbortController();
    const release = deps.cancellation.track(run.id, run.id, cancel);
    const leaseGone = new AbortController();
    const timeout = new AbortController();
    const timer = setTimeout(
      () =>
        timeout.abort(
          new WorkflowFailure('workflow_timeout', `the run took longer than Workflows:RunTimeout (${settings.runTimeoutMs} ms)`),
        ),
      Math.min(LONGEST_TIMER_MS, Math.max(0, settings.runTimeoutMs - run.activeMs)),
    );
    const signal = AbortSignal.any([cancel.signal, lost, leaseGone.signal, stopping, timeout.signal]);
    const leasedAt = Date.now();
    const activeMs = () => run.activeMs + (Date.now() - leasedAt);
    // One budget for the whole tree while this lease lasts; the workflow's runs row is its steps' parent.
    const budget: TreeBudget = { tokens: 0, cost: 0, childRuns: 0 };
    let state = structuredClone(run.state);
    let saving = Promise.resolve();
    /** Saves where the run stands, in order; a save that finds the run taken stops this lease. */
    const save = () => {
      const snapshot = structuredClone(state);
      saving = saving.then(async () => {
        if (leaseGone.signal.aborted) return;
        if (!(await repository.saveState(run, owner, snapshot, activeMs()))) leaseGone.abort(new LeaseLost());
      });
      return saving;
    };

    async function runSuperStep(parent: RunRow): Promise<{ waiting: boolean }> {
      let waiting = false;
      // The first step that fails stops its siblings: their runs end rather than spend on for a run that has failed.
      const siblings = new AbortController();
      const stepSignal = AbortSignal.any([signal, siblings.signal]);
      const pending = state.active.filter((id) => !state.done.includes(id));
      const settled = await Promise.allSettled(
        pending.map(async (id) => {
          const step = run.definition.steps.find((candidate) => candidate.id === id)!;
          try {
            const result = await runStep(step, parent, stepSignal);
            if (result === undefined) {
              waiting = true;
              return;
            }
            state.outputs[id] = result.output;
            state.done.push(id);
            await emit('workflow.step.completed', {
              superStep: state.superStep,
              stepId: id,
              kind: step.kind,
              ...(result.runId ? { runId: result.runId } : {}),
            });
            if (settings.checkpointing) await save();
          } catch (error) {
            siblings.abort(error);
            throw error;
          }
        }),
      );
      if (signal.aborted) throw signal.reason;
      const failed = settled.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      return { waiting };
    }

    /** A step's output; undefined for an input step still waiting for its answer. */
    async function runStep(
      step: WorkflowStep,
      parent: RunRow,
      stepSignal: AbortSignal,
    ): Promise<{ output: unknown; runId?: string } | undefined> {
      const input = stepInput(step, state, run.input);
      if (step.kind === 'transform') {
        try {
          return { output: renderTemplate(step.template, state, run.input, run.parameters) };
        } catch (error) {
          if (error instanceof OutputTooLarge)
            throw new WorkflowFailure('workflow_output_too_large', `step "${step.id}": ${error.message}`);
          throw error;
        }
      }
      if (step.kind === 'input') {
        const prompt = [step.prompt, input === null || input === run.input ? undefined : asText(input)].filter(Boolean).join('\n\n');
        const request = await repository.ask(run, state.superStep, step.id, prompt);
        if (request.status === 'Answered') return { output: request.answer };
        await emit('workflow.input.requested', { superStep: state.superStep, stepId: step.id, requestId: request.id, prompt });
        return undefined;
      }
      const message = [step.prompt, asText(input)].filter(Boolean).join('\n\n');
      await emit('workflow.step.started', { superStep: state.superStep, stepId: step.id, agent: step.agent });
      let outcome: Awaited<ReturnType<RunExecution['runStep']>>;
      try {
        outcome = await deps.execution.runStep(
          run.caller,
          parent,
          budget,
          { agentName: step.agent, message, parameters: run.parameters },
          stepSignal,
        );
      } catch (error) {
        if (stepSignal.aborted) throw stepSignal.reason;
        // Refused before its run existed (an agent deleted since, a definition that no longer resolves).
        const refused = classifyError(error);
        if (!refused || refused.status >= 500) throw error;
        throw new WorkflowFailure('workflow_step_failed', `step "${step.id}" (agent ${step.agent}) could not run: ${refused.message}`);
      }
      if (stepSignal.aborted) throw stepSignal.reason;
      if (outcome.status !== 'Completed')
        throw new WorkflowFailure(
          'workflow_step_failed',
          `step "${step.id}" (agent ${step.agent}) ended ${outcome.status}: ${outcome.error ?? 'no answer'}`,
        );
      return { output: outcome.output, runId: outcome.runId };
    }

    /** What stops this lease without ending the run: the lease gone, the instance stopping or draining. */
    const givenBack = () =>
      lost.aborted ||
      leaseGone.signal.aborted ||
      (stopping.aborted && !cancel.signal.aborted && !timeout.signal.aborted) ||
      cancel.signal.reason instanceof RunInterruption;

    try {
      for (;;) {
        if (state.superStep > settings.maxSuperSteps)
          throw new WorkflowFailure(
            'workflow_limit',
            `the run needs more than Workflows:MaxSuperSteps (${settings.maxSuperSteps}) super steps`,
          );
        if (!state.done.length) await emit('workflow.superstep.started', { superStep: state.superStep, steps: state.active });
        const { waiting } = await runSuperStep(row);
        await saving;
        if (signal.aborted) throw signal.reason;
        if (waiting) {
          await events.drained();
          const paused = await repository.pause(run, owner, state, activeMs());
          if (paused === 'lost') throw new LeaseLost();
          // A cancel that came while it was being given back: nobody would hear it once it waits.
          if (paused === 'waiting' && cancel.signal.aborted && !(cancel.signal.reason instanceof RunInterruption)) {
            await cancelIdle(run.tenantId, run.id);
            return 'ended';
          }
          if (paused === 'waiting') return 'paused';
          // Every answer came while the other steps ran: the super step goes on here, at once.
          continue;
        }
        if (settings.checkpointing) {
          const checkpointId = await repository.checkpoint(run, owner, state);
          if (!checkpointId) throw new LeaseLost();
          await emit('workflow.checkpoint', { checkpointId, superStep: state.superStep });
        }
        const next = nextSuperStep(run.definition, state);
        if (!next.active.length) {
          await emit('workflow.completed', { output: runOutput(state) });
          await events.drained();
          await endRun(run, owner, { status: 'Completed', errorType: null, errorMessage: null }, state, activeMs());
          return 'ended';
        }
        state = next;
        if (settings.checkpointing) await save();
      }
    } catch (error) {
      await events.drained();
      if (givenBack() || error instanceof LeaseLost) {
        if (!lost.aborted && !leaseGone.signal.aborted && !(error instanceof LeaseLost))
          await repository
            .release(run.id, owner)
            .catch((releaseError) =>
              logger.warn({ err: releaseError, runId: run.id }, 'workflow run not given back; its lease expires instead'),
            );
        return 'given-back';
      }
      if (cancel.signal.aborted) await endRun(run, owner, { status: 'Canceled', errorType: null, errorMessage: null }, state, activeMs());
      else {
        const failure =
          error instanceof WorkflowFailure
            ? error
            : timeout.signal.aborted
              ? (timeout.signal.reason as WorkflowFailure)
              : classifyError(error);
        if (!failure) logger.error({ err: error, runId: run.id }, 'workflow run failed unexpectedly');
        await endRun(
          run,
          owner,
          {
            status: 'Failed',
            errorType: failure?.errorType ?? 'internal_error',
            errorMessage:
              failure?.message ?? (error instanceof HangarError ? error.message : 'the workflow run stopped on an internal error'),
          },
          state,
          activeMs(),
        );
      }
      return 'ended';
    } finally {
      clearTimeout(timer);
      release();
    }
  }

  return { execute, cancelIdle };
}

export type WorkflowRunner = ReturnType<typeof createWorkflowRunner>;

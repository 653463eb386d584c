import { classifyError, HangarError, type Logger } from '@hangar/platform';
import type { Cancellation } from '../cancellation/cancellation.service.js';
import { announceStored, createEventWriter, type Emit, type EventWriterDeps } from '../events/event-writer.js';
import { retryWhileUnavailable } from '../recording.js';
import { terminalEvent } from '../runs/run-execution.js';
import type { RunRepository } from '../runs/run.repository.js';
import type { RunExecution } from '../runs/run-execution.js';
import { ZERO_USAGE, type RunOutcome, type RunRow } from '../runs/run.model.js';
import type { TreeBudget } from '../runs/model-turns.js';
import { asText, nextSuperStep, renderTemplate, runOutput, stepInput } from './workflow-graph.js';
import type { WorkflowRunRow, WorkflowState, WorkflowStep } from './workflow.model.js';
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

/** How one lease of a run ended: the run ended, it waits for a human, or it was given back (lease lost, instance stopping). */
export type LeaseOutcome = 'ended' | 'paused' | 'given-back';

/**
 * Executes a leased workflow run from where it stands: super step after super step, the steps of
 * one concurrently. Each finished step is saved (so a super step resumed after a crash runs only
 * the rest), each finished super step checkpointed; an input step asks its question once and the
 * run is given back until every question of the super step is answered. Agent steps are child runs
 * of the workflow's run, executed by the run engine (a cancel of the workflow's run stops them).
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

  async function closeInterruptedSteps(run: WorkflowRunRow) {
    for (const stepRunId of await repository.interruptedSteps(run.id)) {
      const outcome: RunOutcome = {
        status: 'Failed',
        usage: ZERO_USAGE,
        cost: null,
        prices: { input: null, output: null, cachedInput: null },
        errorType: 'interrupted',
        errorMessage: 'the instance executing this workflow step stopped before it finished; the step runs again',
      };
      if (!deps.writer.enabled) {
        await deps.runs.finish(stepRunId, outcome);
        continue;
      }
      const ending = await deps.runs.finishWithEvent(run.tenantId, stepRunId, outcome, terminalEvent(outcome));
      if (ending) await announceStored(deps.writer, ending.target, [ending.event]);
    }
  }

  async function execute(run: WorkflowRunRow, owner: string, lost: AbortSignal, stopping: AbortSignal): Promise<LeaseOutcome> {
    const target = { runId: run.id, rootRunId: run.id, tenantId: run.tenantId, agentName: run.workflow };
    const firstLease = run.status === 'Queued';
    const row = firstLease ? await deps.runs.markRunning(run.id, run.version) : await deps.runs.get(run.tenantId, run.id);
    // Ended meanwhile (a cancel while it waited): nothing left to do but close its own row.
    if (!row || row.status === 'Completed' || row.status === 'Failed' || row.status === 'Canceled') {
      await repository.end(run, run.state, run.activeMs, run.output ?? undefined);
      return 'ended';
    }
    // Steps a dead holder left executing end now: their runs are gone with it, and this lease runs them again.
    if (!firstLease) await closeInterruptedSteps(run);
    const events = createEventWriter(deps.writer, target, await deps.writer.events.lastSeq(run.id));
    const emit = events.emit;
    if (firstLease) void emit('run.started', { workflow: run.workflow, version: run.version, input: run.input });
    else void emit('workflow.resumed', { superStep: run.state.superStep, done: run.state.done });

    const cancel = new AbortController();
    const release = deps.cancellation.track(run.id, run.id, cancel);
    const timeout = new AbortController();
    const timer = setTimeout(
      () =>
        timeout.abort(
          new WorkflowFailure('workflow_timeout', `the run took longer than Workflows:RunTimeout (${settings.runTimeoutMs} ms)`),
        ),
      Math.max(0, settings.runTimeoutMs - run.activeMs),
    );
    const signal = AbortSignal.any([cancel.signal, lost, stopping, timeout.signal]);
    const leasedAt = Date.now();
    const activeMs = () => run.activeMs + (Date.now() - leasedAt);
    // The workflow run's own row, as its steps' parent; one budget for the whole tree while this lease lasts.
    const budget: TreeBudget = { tokens: 0, cost: 0, childRuns: 0 };
    let state = structuredClone(run.state);
    let saving = Promise.resolve(true);
    const save = () => {
      const snapshot = structuredClone(state);
      saving = saving.then((held) => (held ? repository.saveState(run, owner, snapshot, activeMs()) : false));
      return saving;
    };

    async function runSuperStep(parent: RunRow): Promise<{ waiting: boolean }> {
      let waiting = false;
      const pending = state.active.filter((id) => !state.done.includes(id));
      await Promise.all(
        pending.map(async (id) => {
          const step = run.definition.steps.find((candidate) => candidate.id === id)!;
          const result = await runStep(step, parent);
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
          if (settings.checkpointing && !(await save())) throw lost.reason ?? new Error('workflow lease lost');
        }),
      );
      return { waiting };
    }

    /** A step's output; undefined for an input step still waiting for its answer. */
    async function runStep(step: WorkflowStep, parent: RunRow): Promise<{ output: unknown; runId?: string } | undefined> {
      const input = stepInput(step, state, run.input);
      if (step.kind === 'transform') return { output: renderTemplate(step.template, state, run.input, run.parameters) };
      if (step.kind === 'input') {
        const prompt = [step.prompt, input === null || input === run.input ? undefined : asText(input)].filter(Boolean).join('\n\n');
        const request = await repository.ask(run, state.superStep, step.id, prompt);
        if (request.status === 'Answered') return { output: request.answer };
        await emit('workflow.input.requested', { superStep: state.superStep, stepId: step.id, requestId: request.id, prompt });
        return undefined;
      }
      const message = [step.prompt, asText(input)].filter(Boolean).join('\n\n');
      await emit('workflow.step.started', { superStep: state.superStep, stepId: step.id, agent: step.agent });
      const outcome = await deps.execution.runStep(run.caller, parent, budget, step.agent, message, signal);
      if (signal.aborted) throw signal.reason;
      if (outcome.status !== 'Completed')
        throw new WorkflowFailure(
          'workflow_step_failed',
          `step "${step.id}" (agent ${step.agent}) ended ${outcome.status}: ${outcome.error ?? 'no answer'}`,
        );
      return { output: outcome.output, runId: outcome.runId };
    }

    async function end(outcome: Pick<RunOutcome, 'status' | 'errorType' | 'errorMessage'>, output?: unknown): Promise<void> {
      await repository.end(run, state, activeMs(), output);
      if (output !== undefined) await emit('workflow.completed', { output });
      await events.drained();
      const totals = await repository.stepTotals(run.id);
      const full: RunOutcome = { ...outcome, ...totals, prices: { input: null, output: null, cachedInput: null } };
      const ending = await retryWhileUnavailable(() =>
        deps.writer.enabled
          ? deps.runs.finishWithEvent(run.tenantId, run.id, full, terminalEvent(full))
          : deps.runs.finish(run.id, full).then(() => undefined),
      );
      if (ending) await announceStored(deps.writer, target, [ending.event]);
      if (outcome.status === 'Completed' && !settings.keepCheckpoints) await repository.dropCheckpoints(run.id);
    }

    try {
      const parent = row;
      for (;;) {
        if (state.superStep > settings.maxSuperSteps)
          throw new WorkflowFailure(
            'workflow_limit',
            `the run needs more than Workflows:MaxSuperSteps (${settings.maxSuperSteps}) super steps`,
          );
        if (!state.done.length) await emit('workflow.superstep.started', { superStep: state.superStep, steps: state.active });
        const { waiting } = await runSuperStep(parent);
        if (signal.aborted) throw signal.reason;
        if (waiting) {
          await events.drained();
          // An answer that came while the others ran: the super step goes on at once, here.
          if (await repository.pause(run, owner, state, activeMs())) return 'paused';
          continue;
        }
        if (settings.checkpointing) {
          const checkpointId = await repository.checkpoint(run, state);
          await emit('workflow.checkpoint', { checkpointId, superStep: state.superStep });
        }
        const next = nextSuperStep(run.definition, state);
        if (!next.active.length) {
          await end({ status: 'Completed', errorType: null, errorMessage: null }, runOutput(state));
          return 'ended';
        }
        state = next;
        if (settings.checkpointing && !(await save())) throw lost.reason ?? new Error('workflow lease lost');
      }
    } catch (error) {
      if (lost.aborted || (stopping.aborted && !cancel.signal.aborted && !timeout.signal.aborted)) {
        await events.drained();
        if (!lost.aborted)
          await repository
            .release(run.id, owner)
            .catch((releaseError) =>
              logger.warn({ err: releaseError, runId: run.id }, 'workflow run not given back; its lease expires instead'),
            );
        return 'given-back';
      }
      if (cancel.signal.aborted) await end({ status: 'Canceled', errorType: null, errorMessage: null });
      else {
        const known =
          error instanceof WorkflowFailure ? error : ((timeout.signal.reason as WorkflowFailure | undefined) ?? classifyError(error));
        if (!known) logger.error({ err: error, runId: run.id }, 'workflow run failed unexpectedly');
        const failure = known && 'errorType' in known ? known : undefined;
        await end({
          status: 'Failed',
          errorType: failure?.errorType ?? 'internal_error',
          errorMessage:
            failure?.message ?? (error instanceof HangarError ? error.message : 'the workflow run stopped on an internal error'),
        });
      }
      return 'ended';
    } finally {
      clearTimeout(timer);
      release();
    }
  }

  return { execute };
}

export type WorkflowRunner = ReturnType<typeof createWorkflowRunner>;

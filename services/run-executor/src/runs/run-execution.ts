import { experimentLabels } from '@hangar/contracts';
import type { ExperimentVariants } from '../clients/experiment-variants.js';
import { randomUUID } from 'node:crypto';
import { classifyError, traceparentOf, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { HumanWait } from '../approvals/approvals.service.js';
import type { Cancellation } from '../cancellation/cancellation.service.js';
import type { SessionGateway } from '../clients/ports.js';
import type { ContentGuard } from '../content-guard.js';
import { createEventWriter, type EventWriter, type EventWriterDeps } from '../events/event-writer.js';
import { costOf, priceFor, withExtraCost } from '../pricing.js';
import { retryWhileUnavailable, type Recorder } from '../recording.js';
import type { ReconciliationRepository } from '../reconciliation/reconciliation.repository.js';
import type { ModelTurns, ModelTurnsResult, RunSpend, TreeBudget } from './model-turns.js';
import { startedEarly } from './started-early.js';
import type { Preparation } from './prepare.js';
import { sessionTurn } from './run-messages.js';
import {
  placeholderRun,
  recordedRunInput,
  ZERO_USAGE,
  type NewRun,
  type RunOutcome,
  type RunRow,
  type StartRunRequest,
} from './run.model.js';
import type { RunRepository } from './run.repository.js';
import { recordRunEnd } from './run-ending.js';
import { noticingFirstText, type RunMetrics } from './run-metrics.js';
import { JobHandedBack } from './run-interruption.js';
import { recordable, type RunUpdate } from './run-update.js';
import type { ToolSets } from './tool-set.js';
import { createChildRuns } from './child-runs.js';
import type { HistoryCompactor } from './compaction.js';
import { createGuardedTurns } from './guarded-turns.js';
import { inRunContext, startRunTrace } from '../traces/run-tracing.js';
import type { RunSpanClaims } from '../traces/run-span-recorder.js';

export interface ExecutionContext {
  signal: AbortSignal;
  /** A queued run whose row exists already (status Queued): the worker executes it. */
  queuedRunId?: string;
  /** A queued run nobody admitted when it was queued (a schedule's firing): quota admits it now. */
  admitQueued?: boolean;
  /** An interactive run whose process died, restarted here (RunContinuation); its row and input exist. */
  continuedRunId?: string;
  /** Set for a child run: its parent, and the budget of the whole tree. */
  parent?: { run: RunRow; budget: TreeBudget };
  /** A queued run's worker slot, given back while the run (or a child of it) waits for approvals. */
  humanWait?: HumanWait;
  /** A workflow step's run: the request's parameters are the workflow run's, and the agent takes those it declares. */
  parametersOffered?: boolean;
}

export interface RunExecutionDeps {
  runs: RunRepository;
  /** The variant of the agent's running experiment a new root run takes (absent: no experiments). */
  experiments?: ExperimentVariants;
  continuations: Pick<ReconciliationRepository, 'saveContinuation' | 'dropContinuation'>;
  writer: EventWriterDeps;
  preparation: Preparation;
  sessions: Pick<SessionGateway, 'append'>;
  tools: ToolSets;
  modelTurns: ModelTurns;
  /** `UtilityModel`'s summaries of sessions too long for their agent's window (absent: not set). */
  compaction?: HistoryCompactor;
  cancellation: Cancellation;
  guard: ContentGuard | undefined;
  metrics: Pick<RunMetrics, 'runStarted'>;
  record: Recorder;
  logger: Logger;
  runSpanClaims?: RunSpanClaims;
  settings: Pick<
    HangarConfig,
    | 'AgentGraph'
    | 'ContentGuard'
    | 'Voice'
    | 'Pricing'
    | 'RunRecording'
    | 'RunReconciliation'
    | 'RunContinuation'
    | 'StructuredResponse'
    | 'Observability'
    | 'Preflight'
  >;
}

/**
 * One run from its row to its end (SPEC Agents 9–15): prepare → row → model turns → finish. Once
 * the row exists, the run ends exactly once whatever happens: a throw anywhere ends it `Failed`
 * (`internal_error`), a caller that stops reading ends it `Canceled`; either way its row is
 * finished, a terminal event stored (so every tail ends) and the caller's stream told.
 */
export function createRunExecution(deps: RunExecutionDeps) {
  const { settings, record, runs } = deps;
  const continuationEnabled = settings.RunReconciliation.Enabled && settings.RunContinuation.Enabled;
  const turns = createGuardedTurns(deps);

  async function* execute(caller: Caller, request: StartRunRequest, context: ExecutionContext): AsyncGenerator<RunUpdate> {
    const parent = context.parent?.run;
    const budget: TreeBudget = context.parent?.budget ?? { tokens: 0, cost: 0, childRuns: 0 };
    // A new root run that names no version takes its variant of the agent's experiment (a session keeps its variant).
    const assigned =
      parent || context.queuedRunId || context.continuedRunId || request.agentVersion !== undefined || request.kind === 'Evaluation'
        ? undefined
        : await deps.experiments?.assign(caller, request.agentName, request.sessionId);
    if (assigned) request = { ...request, agentVersion: assigned.version };
    // A new root run is admitted by quota; a child is part of its root's run, a queued one was admitted when queued
    // (unless nobody asked for it then: a schedule fired it).
    const prepared = await deps.preparation.prepare(caller, request, {
      admit: !parent && (context.admitQueued === true || (!context.queuedRunId && !context.continuedRunId)),
      tenant: true,
      onlyDeclaredParameters: context.parametersOffered === true,
    });
    const { definition, version } = prepared;
    // What the run was given, as its input records it: the offered parameters the agent declares.
    if (context.parametersOffered) request = { ...request, parameters: [...prepared.parameters].map(([name, value]) => ({ name, value })) };
    const guard = deps.guard;
    // The content guard sees the caller's words before anything records them or a model reads them.
    const inspectInput = guard && settings.ContentGuard.InspectInput;
    const blockedInput = inspectInput && request.messages.some((message) => message.role === 'user' && guard.blocks(message.content));
    if (inspectInput) {
      request = {
        ...request,
        messages: request.messages.map((message) =>
          message.role === 'user' ? { ...message, content: guard.mask(message.content) } : message,
        ),
      };
    }

    const controller = new AbortController();
    const signal = controller.signal;
    // The reason travels on: a drain's deadline or a job handed back is not a cancel.
    const stopWithCaller = () => controller.abort(context.signal.reason);
    context.signal.addEventListener('abort', stopWithCaller, { once: true });
    // A caller that left while the run was being prepared gets no run: nobody would read it.
    if (context.signal.aborted && !context.queuedRunId && !context.continuedRunId) {
      context.signal.removeEventListener('abort', stopWithCaller);
      return;
    }
    const existingRunId = context.queuedRunId ?? context.continuedRunId;
    const runId = existingRunId ?? randomUUID();
    // A queued run that ended already (its worker died after finishing it) is not executed again.
    if (context.queuedRunId && !(await runs.markRunning(runId, version))) return;
    const input = settings.RunRecording.RecordRunInput && !context.continuedRunId ? recordedRunInput(definition.name, request) : undefined;
    // A new run's row, input and first model are one statement; a queued or continued run's row exists.
    const firstModel = existingRunId ? undefined : { provider: definition.model.provider, model: definition.model.model };
    const newRun: NewRun = {
      id: runId,
      agentName: definition.name,
      agentVersion: version,
      sessionId: request.sessionId ?? null,
      kind: parent ? 'Child' : (request.kind ?? 'Interactive'),
      isStreaming: request.isStreaming,
      rootRunId: parent?.rootRunId ?? runId,
      parentRunId: parent?.id ?? null,
      depth: parent ? parent.depth + 1 : 0,
      userId: caller.userId ?? null,
      labels: { ...caller.labels, ...(assigned && experimentLabels(assigned.experiment, assigned.version)) },
    };
    // A new run's row is written while its first model request leaves: what refers to the row (its
    // events, model, approvals, continuation, children, its end) waits for it; the caller hears of
    // the run once it is written. A queued or continued run's stored row is read first.
    const rowWritten = record('run row', async () => {
      if (existingRunId) return runs.get(caller.tenantId, runId);
      try {
        return await runs.insert(caller.tenantId, newRun, 'Running', { input, model: firstModel });
      } catch (error) {
        // The input is kept at best; an input the store refuses must not cost the run its record.
        if (input === undefined || classifyError(error)?.status === 503) throw error;
        deps.logger.warn({ err: error, runId }, 'run input not recorded');
        return runs.insert(caller.tenantId, newRun, 'Running', { model: firstModel });
      }
    });
    const run: RunRow = (existingRunId && (await rowWritten)) || placeholderRun(newRun, firstModel);
    deps.runSpanClaims?.claim(runId);
    const runTrace = startRunTrace(run, caller.tenantId, settings);
    const observed = deps.metrics.runStarted();
    const release = deps.cancellation.track(runId, run.rootRunId, controller);
    // A root interactive run keeps what restarting it needs while it executes (RunContinuation); not
    // a voice turn, whose conversation went with its instance: restarted, it would answer no one.
    const continuable = continuationEnabled && !parent && !context.queuedRunId && request.kind !== 'Voice';
    const heartbeat = settings.RunReconciliation.Enabled
      ? setInterval(() => void record('run heartbeat', () => runs.heartbeatRun(runId)), settings.RunReconciliation.HeartbeatInterval)
      : undefined;
    let events: EventWriter | undefined;
    let updates: AsyncGenerator<RunUpdate, ModelTurnsResult> | undefined;
    let ended = false;
    // What the run spent so far; a run that ends mid-turn records the steps finished until then.
    const spent: RunSpend = { usage: ZERO_USAGE, extraCost: null };

    /** Records the run's end once: its row, then its terminal event after every event before it. */
    async function end(outcome: Omit<RunOutcome, 'prices'> & { prices?: RunOutcome['prices'] }): Promise<RunRow> {
      ended = true;
      if (context.queuedRunId && context.signal.reason instanceof JobHandedBack) {
        // Not ended: the next worker that leases the job executes it again.
        await events?.drained();
        return run;
      }
      const full: RunOutcome = { prices: { input: null, output: null, cachedInput: null }, ...outcome };
      try {
        return await recordEnd(full);
      } finally {
        runTrace.end(full);
        deps.runSpanClaims?.release(runId);
      }
    }
    async function recordEnd(full: RunOutcome): Promise<RunRow> {
      await rowWritten;
      // Every event before the terminal one is stored (or given up) first.
      await events?.drained();
      let endedBefore = false;
      // The row's ending and its terminal event commit together (without recording, the ending alone).
      const recorded = await record('run completion', () =>
        retryWhileUnavailable(() =>
          recordRunEnd({ runs, writer: deps.writer }, { tenantId: caller.tenantId, runId, traceparent: eventTarget.traceparent }, full),
        ).then((row) => {
          endedBefore = !row;
          return row;
        }),
      );
      // Another ending was recorded first (an orphan scan during an outage): it stands, with its terminal event.
      if (endedBefore) return (await record('run', () => runs.get(caller.tenantId, runId))) ?? run;
      observed.finished(full.status, full.usage, full.cost);
      return (
        recorded ?? {
          ...run,
          status: full.status,
          usage: full.usage,
          cost: full.cost,
          errorType: full.errorType,
          errorMessage: full.errorMessage,
        }
      );
    }
    const eventTarget = {
      runId,
      rootRunId: run.rootRunId,
      tenantId: caller.tenantId,
      agentName: definition.name,
      traceparent: traceparentOf(runTrace.context),
    };

    try {
      // What the run records before the caller hears of it, written side by side (and beside its row).
      const recordedFirst = Promise.all([
        continuable && !context.continuedRunId
          ? rowWritten.then(() => record('run continuation', () => deps.continuations.saveContinuation(runId, { caller, request })))
          : undefined,
        input !== undefined && context.queuedRunId ? record('run input', () => runs.recordInput(caller.tenantId, runId, input)) : undefined,
      ]);
      events = createEventWriter(deps.writer, eventTarget, existingRunId ? await deps.writer.events.lastSeq(runId) : 0, rowWritten);
      const emit = events.emit;
      // Stored before every later event of the run (the writer keeps order); the model call need not wait for it.
      void emit(
        'run.started',
        { agentName: definition.name, agentVersion: version, sessionId: request.sessionId ?? null },
        { batch: true },
      );
      updates = startedEarly(
        inRunContext(
          runTrace.context,
          noticingFirstText(
            turns({
              caller,
              request,
              prepared,
              run,
              rowWritten,
              budget,
              signal,
              emit,
              blockedInput: blockedInput === true,
              spent,
              humanWait: context.humanWait,
              chargeImages: (charge) => {
                if (charge.cost !== null) spent.extraCost = (spent.extraCost ?? 0) + charge.cost;
              },
              askAgent: async (agentName, message, announce) => {
                await rowWritten;
                return children.runChild(caller, agentName, message, { run, budget }, signal, announce, emit, context.humanWait);
              },
            }),
            observed.firstToken,
          ),
        ),
      );
      await recordedFirst;
      yield { type: 'started', run: (await rowWritten) ?? run };

      const outcome = yield* updates;
      spent.usage = outcome.usage;
      const prices = priceFor(settings.Pricing, outcome.answered?.provider ?? null, outcome.answered?.model ?? null);
      const modelCost = outcome.answered ? costOf(outcome.usage, prices, settings.Pricing.Currency) : null;
      const cost = withExtraCost(modelCost, spent.extraCost, settings.Pricing.Currency);
      // Children finish inside their parent's tool call, so the tree's spend is known at the parent's next turn.
      budget.tokens += outcome.usage.totalTokens;
      budget.cost += cost?.total ?? 0;
      const failure = outcome.failure;
      if (!failure) {
        // Stored with the deltas before it; the run's end drains the writer.
        if (outcome.outputText)
          void emit('message.completed', { text: recordable(outcome.outputText, settings.RunRecording.MaxPayloadLength) }, { batch: true });
        if (request.sessionId !== undefined)
          await deps.sessions.append(caller, request.sessionId, sessionTurn(request, prepared.attachments, outcome.outputText, runId));
      }
      const canceled = failure?.errorType === 'canceled';
      const status = !failure ? 'Completed' : canceled ? 'Canceled' : 'Failed';
      // A canceled run has not failed: no error type (SPEC "Read view").
      const finished = await end({
        status,
        usage: spent.usage,
        cost,
        prices,
        errorType: canceled ? null : (failure?.errorType ?? null),
        errorMessage: canceled ? null : (failure?.message ?? null),
      });
      if (status === 'Failed') yield { type: 'failed', run: finished, errorType: failure!.errorType, message: failure!.message };
      else yield { type: 'finished', run: finished, outputText: outcome.outputText };
    } catch (error) {
      if (ended) throw error;
      // An engine that went away is named as such; anything else is an internal error, logged, not shown.
      const known = classifyError(error);
      if (!known) deps.logger.error({ err: error, runId }, 'run failed unexpectedly');
      const errorType = known?.errorType ?? 'internal_error';
      const message = known?.message ?? 'the run stopped on an internal error';
      // Images drawn before the failure were paid for: they stay in its cost.
      const finished = await end({
        status: 'Failed',
        usage: spent.usage,
        cost: withExtraCost(null, spent.extraCost, settings.Pricing.Currency),
        errorType,
        errorMessage: message,
      });
      yield { type: 'failed', run: finished, errorType, message };
    } finally {
      // The caller stopped reading (its stream is gone): the run ends with it.
      if (!ended) {
        controller.abort();
        await end({
          status: 'Canceled',
          usage: spent.usage,
          cost: withExtraCost(null, spent.extraCost, settings.Pricing.Currency),
          errorType: null,
          errorMessage: null,
        }).catch((error) => deps.logger.error({ err: error, runId }, 'run could not be ended'));
      }
      clearInterval(heartbeat);
      // Started before the caller heard of the run, the turns may not have been read at all.
      await updates?.return(undefined as never).catch(() => undefined);
      if (continuable) await record('run continuation', () => deps.continuations.dropContinuation(runId));
      release();
      context.signal.removeEventListener('abort', stopWithCaller);
    }
  }

  const children = createChildRuns(execute, settings);

  return { execute, runStep: children.runStep };
}

export type RunExecution = ReturnType<typeof createRunExecution>;

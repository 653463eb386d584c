import type { ExperimentVariants } from '../clients/experiment-variants.js';
import type { Meter } from '@opentelemetry/api';
import {
  auditOrLog,
  clampPage,
  conflict,
  HangarError,
  isUuid,
  notFound,
  type Caller,
  type HangarConfig,
  type Logger,
} from '@hangar/platform';
import type { PubSub } from '@hangar/messaging';
import type { ApprovalRepository } from '../approvals/approval.repository.js';
import { createApprovals } from '../approvals/approvals.service.js';
import { createCancellation } from '../cancellation/cancellation.service.js';
import type {
  AgentLoader,
  AttachmentReader,
  AuditWriter,
  QuotaAdmission,
  SessionGateway,
  SkillGateway,
  TenantSettingsSource,
  ToolCatalog,
} from '../clients/ports.js';
import { contentGuardFrom } from '../content-guard.js';
import { typedPubSub } from '../events/channels.js';
import { createEventTails } from '../events/event-tail.js';
import { announceStored } from '../events/event-writer.js';
import type { EventRepository } from '../events/event.repository.js';
import { createFeedback, type FeedbackRequest } from '../feedback/feedback.service.js';
import type { ScoreRepository } from '../feedback/score.repository.js';
import type { JobRepository } from '../jobs/job.repository.js';
import { createQueuedRuns } from '../jobs/queued-runs.service.js';
import type { CircuitBreaker } from '../providers/circuit-breaker.js';
import { createModelHealth } from '../providers/model-health.js';
import { createModelProbe } from '../providers/model-probe.js';
import type { ModelResolver } from '../providers/model-providers.js';
import { createRecorder } from '../recording.js';
import type { ReconciliationRepository } from '../reconciliation/reconciliation.repository.js';
import { createReconciliation } from '../reconciliation/reconciliation.service.js';
import { createAdmission } from './admission.js';
import { createModelTurns } from './model-turns.js';
import { createHistoryCompaction } from './compaction.js';
import { createPreparation } from './prepare.js';
import { graphLimit } from './child-runs.js';
import { createRunExecution } from './run-execution.js';
import { terminalEvent } from './run-ending.js';
import { createRunMetrics } from './run-metrics.js';
import { RunInterruption } from './run-interruption.js';
import { TERMINAL_STATUSES, ZERO_USAGE, type RunFilter, type RunRow, type StartRunRequest } from './run.model.js';
import type { RunRepository } from './run.repository.js';
import type { RunUpdate } from './run-update.js';
import { createToolSets } from './tool-set.js';
import type { KnowledgeTools } from '../knowledge/knowledge-tools.js';
import type { McpTools } from '../mcp/mcp-tools.js';
import type { SpanRepository } from '../traces/span.repository.js';
import type { RunSpanClaims } from '../traces/run-span-recorder.js';
import type { ImageService } from '../images/image.service.js';
import type { WorkflowRepository } from '../workflows/workflow.repository.js';
import { createWorkflowRunner } from '../workflows/workflow-runner.js';
import { createWorkflowService } from '../workflows/workflow.service.js';

const TREE_LIMIT = 200;

export interface RunEngineDeps {
  config: HangarConfig;
  logger: Logger;
  repositories: {
    runs: RunRepository;
    events: EventRepository;
    approvals: ApprovalRepository;
    scores: ScoreRepository;
    jobs: JobRepository;
    reconciliation: ReconciliationRepository;
    spans: SpanRepository;
    workflows: WorkflowRepository;
  };
  pubsub: PubSub;
  /** Told after events were stored, so the outbox relay ships them soon. */
  eventsStored: () => void;
  /** Without an outbox: hands stored events to the (in-process) event log. */
  shipDirect?: (records: Array<{ key: string; value: string }>) => Promise<void>;
  agents: AgentLoader;
  sessions: SessionGateway;
  skills: SkillGateway;
  attachments: AttachmentReader;
  audit: AuditWriter;
  admitRun: QuotaAdmission;
  /** The tenant's own provider bindings (cached, see providers/tenant-providers.ts). */
  tenantSettings: TenantSettingsSource;
  models: ModelResolver;
  breaker: CircuitBreaker;
  /** Where the run series are recorded (the process's metrics). */
  meter: Meter;
  /** Names of the tools in the registry's catalog, with their JSON Schemas. */
  toolCatalog: ToolCatalog;
  /** The tools of agents' `mcp:<server>/<tool>` references. */
  mcpTools: McpTools;
  /** The search tools of agents' `knowledge:<collection>` references. */
  knowledgeTools: KnowledgeTools;
  /** Tells the run span recorder of this engine which runs are its own (spans of other engines in the process are not). */
  runSpanClaims?: RunSpanClaims;
  /** Image generation, for agents' `generate_image` tool (Images:Enabled). */
  images?: Pick<ImageService, 'generate'>;
  /** The agents' running experiments (the evaluation service's). */
  experiments?: ExperimentVariants;
}

/**
 * The run executor's rules, composed: each concern lives in its own folder (runs, events,
 * approvals, feedback, jobs, cancellation, reconciliation); this is the one door the gRPC
 * handlers and the job worker use.
 */
export function createRunEngine(deps: RunEngineDeps) {
  const { config, logger, repositories } = deps;
  const record = createRecorder(logger);
  const pubsub = typedPubSub(deps.pubsub, logger);
  const audit = auditOrLog(deps.audit, logger);
  const writer = {
    events: repositories.events,
    pubsub,
    record,
    eventsStored: deps.eventsStored,
    shipDirect: deps.shipDirect,
    enabled: config.RunRecording.Enabled,
    batchWindowMs: config.Hangar.Runs.EventBatchWindow,
  };
  const admit = createAdmission({ admitRun: deps.admitRun, logger, settings: config });
  // UtilityModel's: a session too long for its agent's window is summarized for the run, not refused.
  const compaction = createHistoryCompaction({ agents: deps.agents, models: deps.models, settings: config });
  const preparation = createPreparation({
    compaction,
    agents: deps.agents,
    admit,
    tenantSettings: deps.tenantSettings,
    sessions: deps.sessions,
    attachments: deps.attachments,
    settings: config,
  });
  const tools = createToolSets({
    toolCatalog: deps.toolCatalog,
    skills: deps.skills,
    mcp: deps.mcpTools,
    knowledge: deps.knowledgeTools,
    images: deps.images,
    settings: config,
  });
  const approvals = createApprovals({
    approvals: repositories.approvals,
    runs: repositories.runs,
    pubsub,
    tools,
    record,
    audit,
    settings: config,
  });
  const metrics = createRunMetrics(deps.meter);
  const modelHealth = createModelHealth({ breaker: deps.breaker, settings: config });
  const cancellation = createCancellation({ pubsub, logger, replyTimeoutMs: config.Hangar.Runs.CancelReplyTimeout });
  const execution = createRunExecution({
    runs: repositories.runs,
    experiments: deps.experiments,
    continuations: repositories.reconciliation,
    writer,
    preparation,
    sessions: deps.sessions,
    tools,
    modelTurns: createModelTurns({
      models: deps.models,
      breaker: deps.breaker,
      observeCall: (target, outcome, durationMs) => {
        metrics.modelCall(target, outcome, durationMs);
        modelHealth.record(target, outcome, durationMs);
      },
      approvals,
      runs: repositories.runs,
      record,
      logger,
      needsApproval: tools.needsApproval,
      settings: config,
      graph: { maxTotalTokens: graphLimit(config.AgentGraph.MaxTotalTokens), maxTotalCost: graphLimit(config.AgentGraph.MaxTotalCost) },
    }),
    compaction,
    cancellation,
    guard: contentGuardFrom(config),
    metrics,
    record,
    logger,
    settings: config,
    runSpanClaims: deps.runSpanClaims,
  });
  const queued = createQueuedRuns({
    jobs: repositories.jobs,
    runs: repositories.runs,
    writer,
    preparation,
    execution,
    pubsub,
    logger,
    settings: config,
  });
  const reconciliation = createReconciliation({
    repository: repositories.reconciliation,
    execution,
    eventsStored: deps.eventsStored,
    shipDirect: deps.shipDirect,
    logger,
    settings: config,
  });
  const feedback = createFeedback({ scores: repositories.scores, audit });
  // Workflows drive runs through the execution's step seam: each agent step a child run of the workflow's run.
  const workflows = createWorkflowService({
    repository: repositories.workflows,
    agents: deps.agents,
    admit,
    audit: deps.audit,
    pubsub,
    logger,
    enabled: config.Workflows.Enabled,
  });
  const workflowRunner = createWorkflowRunner({
    repository: repositories.workflows,
    runs: repositories.runs,
    execution,
    cancellation,
    writer,
    logger,
    settings: {
      checkpointing: config.Workflows.EnableCheckpointing,
      keepCheckpoints: config.Workflows.KeepCheckpointsAfterCompletion,
      maxSuperSteps: config.Workflows.MaxSuperSteps,
      runTimeoutMs: config.Workflows.RunTimeout,
      leaseMs: config.Scheduling.LeaseDuration,
    },
  });
  const tails = createEventTails({
    events: repositories.events,
    pubsub,
    pollIntervalMs: config.Hangar.Api.RunEventPollInterval,
    logger,
  });

  async function requireRun(caller: Caller, runId: string): Promise<RunRow> {
    const run = isUuid(runId) ? await repositories.runs.get(caller.tenantId, runId) : undefined;
    if (!run) throw notFound(`run ${runId} not found`);
    return run;
  }

  let draining = false;
  const refuseWhileDraining = () => {
    if (draining)
      throw new HangarError('unavailable', 'this instance is shutting down and takes no new runs; retry on another', {}, 'draining');
  };

  return {
    start: (caller: Caller, request: StartRunRequest, signal: AbortSignal): AsyncGenerator<RunUpdate> => {
      refuseWhileDraining();
      return execution.execute(caller, request, { signal });
    },
    estimate: preparation.estimate,
    async enqueue(caller: Caller, request: StartRunRequest) {
      refuseWhileDraining();
      return queued.enqueue(caller, request);
    },
    enqueueScheduled: queued.enqueueScheduled,
    /** Hears cancels from every instance (the one channel, for the process's life); `stopHearingCancels` at close. */
    hearCancels: cancellation.hear,
    stopHearingCancels: cancellation.stopHearing,
    wakeWorkers: queued.wakeWorkers,
    /**
     * Drain: no new run is taken; the runs executing here may finish until `deadline`, then those
     * still going end Failed (`draining`). Queued runs are the worker's: drain it first, so that
     * at the deadline its jobs are handed back before this fails what is left.
     */
    async finishRuns(deadline: AbortSignal) {
      draining = true;
      const interrupt = () =>
        cancellation.stopAll(new RunInterruption('draining', 'the instance executing this run stopped before it finished (Drain:Timeout)'));
      if (deadline.aborted) interrupt();
      else deadline.addEventListener('abort', interrupt, { once: true });
      await cancellation.whenIdle();
      deadline.removeEventListener('abort', interrupt);
    },
    runQueued: queued.runQueued,
    abandonQueued: queued.abandonQueued,
    reconcileOrphans: reconciliation.reconcileOrphans,
    expireApprovals: approvals.expire,
    /** Waits for the orphaned runs this process restarted. */
    drain: reconciliation.drain,
    /** Each configured model's health and circuit, cached Health:CacheTtl. */
    modelHealth: modelHealth.report,
    /** One background probe round (Health:BackgroundInterval). */
    probeModels: createModelProbe({ models: deps.models, health: modelHealth, breaker: deps.breaker, logger }),
    /** Jobs waiting for a worker, per lane. */
    jobQueueDepth: () => repositories.jobs.queuedByLane(),
    get: requireRun,
    /** Workflow definitions and runs (API.md "Workflows"), and the runner a workflow worker executes them with. */
    workflows,
    workflowRunner,

    list: (caller: Caller, filter: RunFilter) =>
      repositories.runs.list(caller.tenantId, { ...filter, ...clampPage(filter.skip, filter.take) }),

    /** The whole tree, resolved from the root whichever member is named; truncated at 200 runs. */
    async tree(caller: Caller, runId: string): Promise<RunRow[]> {
      const run = await requireRun(caller, runId);
      return repositories.runs.tree(caller.tenantId, run.rootRunId, TREE_LIMIT);
    },

    async input(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      const input = await repositories.runs.getInput(caller.tenantId, runId);
      if (!input) throw notFound(`run ${runId} has no recorded input`);
      return { input: input.input as Record<string, unknown>, recordedAt: input.recorded_at.toISOString() };
    },

    /** The run's kept spans (empty when its trace was not kept: sampled out, or persisting is off). */
    async trace(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return repositories.spans.list(caller.tenantId, runId);
    },

    /** Stored events after `afterSeq`, then live ones until the run's terminal event. */
    async *events(caller: Caller, runId: string, afterSeq: number, signal: AbortSignal) {
      await requireRun(caller, runId);
      yield* tails.tail(caller.tenantId, runId, afterSeq, signal);
    },

    /**
     * Stops a run wherever it executes: here directly, elsewhere through the instance running its
     * root (it answers on a reply channel). A root takes its children with it. 409 when no live
     * instance is executing it (finished, or its process died).
     */
    async cancel(caller: Caller, runId: string): Promise<RunRow> {
      const run = await requireRun(caller, runId);
      if (TERMINAL_STATUSES.has(run.status)) throw conflict(`run ${runId} is not executing (status ${run.status})`);
      if (cancellation.stopLocally(runId)) return run;
      // A workflow run nobody executes (queued, waiting for answers, between holders) ends here.
      if (run.kind === 'Workflow' && (await workflowRunner.cancelIdle(caller.tenantId, runId))) return run;
      if (run.status === 'Queued') {
        const terminal = terminalEvent({ status: 'Canceled', usage: ZERO_USAGE, cost: null, errorType: null, errorMessage: null });
        const canceled = await repositories.jobs.cancelQueued(runId, writer.enabled ? terminal : undefined);
        if (canceled) {
          if (canceled.event) await announceStored(writer, canceled.target!, [canceled.event]);
          return canceled.run;
        }
      }
      if (!(await cancellation.askExecutingInstance(run))) {
        throw conflict(`run ${runId} is not executing on any live instance (status ${run.status})`);
      }
      return run;
    },

    async saveFeedback(caller: Caller, runId: string, request: FeedbackRequest) {
      await requireRun(caller, runId);
      return feedback.save(caller, runId, request);
    },
    async listFeedback(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return feedback.list(caller, runId);
    },
    async deleteFeedback(caller: Caller, runId: string, scoreId: string) {
      await requireRun(caller, runId);
      await feedback.delete(caller, runId, scoreId);
    },

    async listApprovals(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return approvals.list(runId);
    },
    async decideApproval(caller: Caller, runId: string, approvalId: string, decision: { approved: boolean; comment?: string }) {
      await requireRun(caller, runId);
      return approvals.decide(caller, runId, approvalId, decision);
    },
  };
}

export type RunEngine = ReturnType<typeof createRunEngine>;

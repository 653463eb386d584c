import { createExperimentVariants } from './clients/experiment-variants.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  ImageServiceDefinition,
  VoiceServiceDefinition,
  RetentionServiceDefinition,
  RUN_EVENTS_TOPIC,
  RunExecutorServiceDefinition,
  ScheduleServiceDefinition,
  WorkflowServiceDefinition,
} from '@hangar/contracts';
import { createOutboxRelay, createSharedSlots } from '@hangar/messaging';
import {
  addSpanSink,
  auditOrLog,
  contentCipherFrom,
  createDirectFetch,
  createGuardedFetch,
  foldLanes,
  grpcServiceModule,
  mcpSecretResolver,
  refreshedGauge,
  retentionGrpc,
  runSpansRecorded,
} from '@hangar/platform';
import { createApprovalRepository } from './approvals/approval.repository.js';
import { createTenantSettings } from './providers/tenant-settings.js';
import { createCachedAgents } from './clients/cached-agents.js';
import { createQuotaCoverage } from './clients/quota-coverage.js';
import { createServiceClients } from './clients/grpc-clients.js';
import type { RunDatabase } from './database.js';
import { typedPubSub } from './events/channels.js';
import { createEventRepository } from './events/event.repository.js';
import { createScoreRepository } from './feedback/score.repository.js';
import { createJobRepository } from './jobs/job.repository.js';
import { createJobWorker } from './jobs/job-worker.js';
import { RUN_SCHEMA, runMigrations } from './migrations/index.js';
import { createCircuitBreaker, createConcurrencyLimiter } from './providers/circuit-breaker.js';
import { createModelResolver } from './providers/model-providers.js';
import { createReconciliationRepository } from './reconciliation/reconciliation.repository.js';
import { RUN_RETENTION_TARGETS } from './retention/retention-targets.js';
import { createRunSpanRecorder } from './traces/run-span-recorder.js';
import { createSpanRepository } from './traces/span.repository.js';
import { RUN_SEALED_COLUMNS } from './retention/sealed-columns.js';
import { createDiagnostics } from './diagnostics.js';
import { runExecutorGrpc } from './run-executor.grpc.js';
import { createKnowledgeTools } from './knowledge/knowledge-tools.js';
import { createMcpTools } from './mcp/mcp-tools.js';
import { createRunEngine } from './runs/run-engine.service.js';
import { limitToolOutput } from './runs/tool-set.js';
import { applyReadView } from './runs/read-view.repository.js';
import { createRunRepository } from './runs/run.repository.js';
import { createScheduleRepository } from './schedules/schedule.repository.js';
import { createScheduleService } from './schedules/schedule.service.js';
import { createScheduler } from './schedules/scheduler.js';
import { scheduleGrpc } from './schedules/schedules.grpc.js';
import { createWorkflowRepository } from './workflows/workflow.repository.js';
import { createImageGenerator } from './images/image-generator.js';
import { createImageService } from './images/image.service.js';
import { createSpendQuota } from './spend/spend-quota.js';
import { imageGrpc } from './images/images.grpc.js';
import { createSpeechProvider } from './voice/speech-provider.js';
import { createVoiceService } from './voice/voice.service.js';
import { voiceGrpc } from './voice/voice.grpc.js';
import { createConversationRepository } from './voice/conversations/conversation.repository.js';
import { createConversationService } from './voice/conversations/conversation.service.js';
import { createWorkflowWorker } from './workflows/workflow-worker.js';
import { workflowGrpc } from './workflows/workflows.grpc.js';

// Run events reach the event log within ~50 ms of being stored when this process wrote them,
// within a second otherwise (the wait gathers a busy process's runs into a few rounds of two
// statements each); one round ships up to 500, holding the outbox lease at most 10 s. A
// relay killed mid-round stalls every run's events that long; a round that outlives the lease only
// leaves its rows to be shipped again by the next holder (at-least-once, as a kill does).
const OUTBOX_SETTINGS = { pollIntervalMs: 1000, batchDelayMs: 50, batchSize: 500, leaseMs: 10_000 };

export const runExecutorModule = grpcServiceModule({
  name: 'RunExecutor',
  dependsOn: ['AgentRegistry', 'Session', 'Attachment', 'Governance', 'Knowledge'],
  async setup({ config, logger, engines, metrics, addressOf }, grpc) {
    const database = await engines.storage.open<RunDatabase>(RUN_SCHEMA, runMigrations);
    // A durable event log (Kafka) is fed through the transactional outbox; an in-process one, gone
    // with its process anyway, directly after each write (no outbox rows, no relay round trips).
    const outbox = engines.eventLog.kind !== 'memory';
    // Inputs, event data, score comments and approval arguments are sealed when content protection is on.
    const cipher = contentCipherFrom(config);
    const repositories = {
      runs: createRunRepository(database.db, cipher, { outbox }),
      events: createEventRepository(database.db, { outbox, cipher }),
      approvals: createApprovalRepository(database.db, cipher),
      scores: createScoreRepository(database.db, cipher),
      jobs: createJobRepository(database.db, { outbox, cipher }),
      reconciliation: createReconciliationRepository(database.db, { outbox, cipher }),
      spans: createSpanRepository(database.db, cipher),
      workflows: createWorkflowRepository(database.db, cipher),
    };
    // Each run's spans, kept when its run span ends (Observability:PersistSpans).
    const spanRecorder = createRunSpanRecorder({ spans: repositories.spans, settings: config, logger });
    // The process records run spans only if its first start asked for it (one tracer per process).
    const removeSpanSink =
      config.Observability.Enabled && config.Observability.PersistSpans && runSpansRecorded() ? addSpanSink(spanRecorder.sink) : undefined;
    const postgres = config.Stores.Postgres;
    const readView =
      database.engine === 'postgres'
        ? { target: { schema: postgres.SchemaName, name: 'runs_v1' }, enabled: postgres.EnableReadView }
        : {
            target: { schema: 'public', name: `${config.Stores.Embedded.TablePrefix}runs_v1` },
            enabled: config.Stores.Embedded.EnableReadView,
          };
    await applyReadView(database.db, database.schema, readView.target, readView.enabled);
    const clients = createServiceClients(addressOf, { tenantId: config.DefaultTenantId, actor: 'run-executor' });
    const tenantSettings = createTenantSettings({
      fetch: clients.tenantSettings,
      pubsub: engines.pubsub,
      logger,
    });
    // What every run asks other services before its model call, kept until a change is announced.
    const cachedAgents = createCachedAgents({ agents: clients.agents, pubsub: engines.pubsub, logger });
    const experiments = createExperimentVariants({ address: () => addressOf('Evaluation'), pubsub: engines.pubsub, logger });
    const quotaCoverage = createQuotaCoverage({ admitRun: clients.admitRun, pubsub: engines.pubsub, logger });
    await Promise.all([tenantSettings.start(), cachedAgents.start(), quotaCoverage.start(), experiments.start()]);

    const relay = outbox
      ? createOutboxRelay({
          shipOutbox: repositories.events.shipOutbox,
          eventLog: engines.eventLog,
          topic: RUN_EVENTS_TOPIC,
          onError: (error) => logger.warn({ err: error }, 'run events could not be shipped to the event log; they stay in the outbox'),
          settings: OUTBOX_SETTINGS,
        })
      : undefined;
    relay?.start();
    // Tenants' own provider endpoints are checked on every connection (SPEC "Network egress and webhooks").
    const tenantEgress = createGuardedFetch({ allowPrivateNetworkTargets: config.Egress.AllowPrivateNetworkTargets });
    const operatorEgress = createDirectFetch();
    // Images:Provider is the operator's configuration (checked at start): its calls go out unguarded, like the global model providers'.
    const images = config.Images;
    // Images, speech and transcriptions asked for outside any run, under the tenant's Cost rules for every agent.
    const spend = createSpendQuota({ gateway: clients.spendQuota, logger, settings: config });
    const imageService = createImageService({
      generator: images.Enabled
        ? createImageGenerator(config.Providers[images.Provider!], images.Model!, operatorEgress.fetch, config.Attachments.MaxBytes)
        : undefined,
      attachments: clients.attachmentWriter,
      audit: auditOrLog(clients.audit, logger),
      spend,
      settings: config,
    });
    // The speech provider is the operator's configuration too.
    const speechProvider = createSpeechProvider(config, operatorEgress.fetch);
    // Its slots are the provider account's: one count across the run executors on one Redis.
    const speechSlots = await createSharedSlots({
      limit: config.Voice.MaxConcurrentRequests,
      key: `${config.Redis.ChannelPrefix}voice-slots`,
      redisUrl: speechProvider ? config.Redis.ConnectionString : null,
      onError: (error) => logger.warn({ err: error }, 'speech slots could not be counted in Redis; this process counts its own meanwhile'),
    });
    const voiceService = createVoiceService({
      provider: speechProvider,
      audit: auditOrLog(clients.audit, logger),
      spend,
      settings: config,
      slots: speechSlots,
    });
    const engine = createRunEngine({
      config,
      logger,
      repositories,
      pubsub: engines.pubsub,
      eventsStored: () => relay?.nudge(),
      shipDirect: outbox ? undefined : (records) => engines.eventLog.append(RUN_EVENTS_TOPIC, records),
      agents: cachedAgents.agents,
      experiments: experiments.variants,
      images: config.Images.Enabled ? imageService : undefined,
      sessions: clients.sessions,
      skills: clients.skills,
      attachments: clients.attachments,
      audit: clients.audit,
      admitRun: quotaCoverage.admitRun,
      tenantSettings: tenantSettings.of,
      toolCatalog: clients.toolCatalog,
      mcpTools: createMcpTools({
        servers: clients.toolServers,
        enabled: config.Mcp.Enabled,
        fetch: tenantEgress.fetch,
        secret: mcpSecretResolver(config),
        timeoutMs: config.Tools.DefaultTimeout,
        limitOutput: (value) => limitToolOutput(value, config.Tools.DefaultMaxOutputBytes),
        maxResourceBytes: config.Mcp.MaxResourceBytesPerResource,
        maxResourceBytesTotal: config.Mcp.MaxResourceBytesTotal,
      }),
      knowledgeTools: createKnowledgeTools({
        knowledge: clients.knowledge,
        timeoutMs: config.Tools.DefaultTimeout,
        limitOutput: (value) => limitToolOutput(value, config.Tools.DefaultMaxOutputBytes),
      }),
      models: createModelResolver(config, createConcurrencyLimiter(config.ModelConcurrency.MaxConcurrentCallsPerProvider), {
        tenant: tenantEgress.fetch,
        operator: operatorEgress.fetch,
      }),
      runSpanClaims: removeSpanSink && spanRecorder,
      breaker: createCircuitBreaker({
        enabled: config.CircuitBreaker.Enabled,
        failureThreshold: config.CircuitBreaker.FailureThreshold,
        breakDurationMs: config.CircuitBreaker.BreakDuration,
      }),
      meter: metrics.meter,
    });
    const diagnose = createDiagnostics({
      jobQueueDepth: engine.jobQueueDepth,
      pubsub: engines.pubsub,
      sqlKind: database.engine,
      eventLogKind: engines.eventLog.kind,
    });
    grpc.server.add(RunExecutorServiceDefinition, runExecutorGrpc(engine, diagnose));
    grpc.server.add(RetentionServiceDefinition, retentionGrpc(database, RUN_RETENTION_TARGETS, { columns: RUN_SEALED_COLUMNS, cipher }));
    const scheduling = config.Scheduling;
    const scheduleRepository = createScheduleRepository(database.db);
    const schedules = createScheduleService({
      repository: scheduleRepository,
      agents: clients.agents,
      queued: engine,
      audit: auditOrLog(clients.audit, logger),
      logger,
      settings: config,
    });
    grpc.server.add(ScheduleServiceDefinition, scheduleGrpc(schedules));
    grpc.server.add(WorkflowServiceDefinition, workflowGrpc(engine.workflows));
    grpc.server.add(ImageServiceDefinition, imageGrpc(imageService));
    const conversations = createConversationService({
      repository: createConversationRepository(database.db),
      voice: voiceService,
      runs: engine.start,
      agents: cachedAgents.agents,
      decide: engine.decideApproval,
      attachments: clients.attachmentWriter,
      logger,
      settings: config,
    });
    grpc.server.add(VoiceServiceDefinition, voiceGrpc(voiceService, conversations));
    // Scheduling:Enabled and RunWorker switch this instance's background work off: it neither fires schedules nor executes jobs.
    const background = scheduling.Enabled && scheduling.RunWorker;
    const worker = background
      ? createJobWorker({
          repository: repositories.jobs,
          queued: engine,
          pubsub: typedPubSub(engines.pubsub, logger),
          logger,
          settings: {
            pollIntervalMs: scheduling.PollInterval,
            leaseMs: scheduling.LeaseDuration,
            maxConcurrentJobs: scheduling.MaxConcurrentJobs,
            maxAttempts: config.AsyncRun.MaxAttempts,
            lanes: scheduling.Lanes,
            maxConcurrentJobsPerLane: scheduling.MaxConcurrentJobsPerLane,
            stopTimeoutMs: config.Drain.Timeout,
          },
        })
      : undefined;
    // Workflow runs are background work like queued runs: leased for Scheduling:LeaseDuration (how soon another
    // instance resumes one whose holder died), and left to other instances when Scheduling:RunWorker is off.
    const workflowWorker =
      background && config.Workflows.Enabled
        ? createWorkflowWorker({
            repository: repositories.workflows,
            runner: engine.workflowRunner,
            pubsub: typedPubSub(engines.pubsub, logger),
            logger,
            settings: {
              pollIntervalMs: scheduling.PollInterval,
              leaseMs: scheduling.LeaseDuration,
              maxConcurrentRuns: config.Workflows.MaxConcurrentRuns,
            },
          })
        : undefined;
    const singleton = config.SingletonExecution;
    const scheduler = background
      ? createScheduler({
          schedules,
          lease: scheduleRepository,
          logger,
          settings: {
            pollIntervalMs: scheduling.PollInterval,
            maxPerRound: scheduling.MaxItemsPerJob,
            singleton: {
              enabled: singleton.Enabled,
              leaseMs: singleton.LeaseDuration,
              ownerId: singleton.OwnerId ?? `${hostname()}-${randomUUID().slice(0, 8)}`,
            },
          },
        })
      : undefined;
    await engine.hearCancels();
    await worker?.start();
    await workflowWorker?.start();
    scheduler?.start();
    const reconciliation = config.RunReconciliation;
    // Orphaned interactive runs (their process died) are continued or closed by whichever instance scans.
    const scanner = reconciliation.Enabled
      ? setInterval(() => {
          engine.reconcileOrphans().catch((error) => logger.warn({ err: error }, 'orphan scan failed'));
        }, reconciliation.ScanInterval)
      : undefined;
    const approvals = config.Approvals;
    const approvalScanner = approvals.ExpirationEnabled
      ? setInterval(() => {
          engine.expireApprovals().catch((error) => logger.warn({ err: error }, 'approval expiry scan failed'));
        }, approvals.ScanInterval)
      : undefined;
    const observability = config.Observability;
    const foldLane = foldLanes(observability.MaxJobLaneCardinality);
    const queueGauge = observability.EnableJobQueueDepthGauge
      ? refreshedGauge({
          meter: metrics.meter,
          name: 'hangar_job_queue_depth',
          description: 'Jobs waiting for a worker, per lane (lanes beyond Observability:MaxJobLaneCardinality fold into "other")',
          refreshMs: observability.JobQueueDepthRefreshInterval,
          read: async () => Object.entries(foldLane(await engine.jobQueueDepth())).map(([lane, value]) => ({ labels: { lane }, value })),
          logger,
        })
      : undefined;
    // Probes run one round at a time: a round slower than the interval skips the next tick.
    let probing: Promise<void> | undefined;
    const prober =
      config.Health.BackgroundInterval === null
        ? undefined
        : setInterval(() => {
            probing ??= engine
              .probeModels()
              .catch((error) => logger.warn({ err: error }, 'model probe round failed'))
              .finally(() => (probing = undefined));
          }, config.Health.BackgroundInterval);
    return {
      // The worker first: at the deadline its jobs go back to the queue before the engine fails the runs left.
      // The scheduler stops firing at once (and gives up its lease, so another instance fires).
      drain: async (deadline: AbortSignal) => {
        await Promise.all([
          scheduler?.stop(),
          worker?.drain(deadline),
          workflowWorker?.stop(),
          engine.finishRuns(deadline),
          conversations.drain(deadline),
        ]);
      },
      close: async () => {
        conversations.closeAll();
        clearInterval(prober);
        await probing;
        queueGauge?.stop();
        clearInterval(scanner);
        clearInterval(approvalScanner);
        await scheduler?.stop();
        await worker?.stop();
        await workflowWorker?.stop();
        await engine.drain();
        await engine.stopHearingCancels();
        removeSpanSink?.();
        await spanRecorder.settled();
        await relay?.stop();
        await Promise.all([tenantSettings.stop(), cachedAgents.stop(), quotaCoverage.stop(), experiments.stop()]);
        await tenantEgress.close();
        await operatorEgress.close();
        await speechSlots.close();
        clients.close();
      },
    };
  },
});

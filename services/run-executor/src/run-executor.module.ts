import {
  AgentRegistryServiceDefinition,
  AttachmentServiceDefinition,
  GovernanceServiceDefinition,
  recordFromProto,
  RunExecutorServiceDefinition,
  SessionServiceDefinition,
} from '@hangar/contracts';
import { createChannel, createServiceClient, grpcServiceModule, HangarError } from '@hangar/platform';
import { runMigrations } from './migrations/index.js';
import { createCircuitBreaker, createConcurrencyLimiter } from './providers/circuit-breaker.js';
import { createModelResolver } from './providers/model-providers.js';
import { createJobWorker } from './job-worker.js';
import { createOutboxRelay } from './outbox-relay.js';
import { createRunEngine } from './run-engine.service.js';
import { runExecutorGrpc } from './run-executor.grpc.js';
import { createRunRepository, type RunDatabase } from './run.repository.js';

const TOOL_CATALOG_TTL_MS = 60_000;
// Run events reach the event log within ~20 ms of being stored when this process wrote them,
// within a second otherwise; one round ships up to 500.
const OUTBOX_POLL_MS = 1000;
const OUTBOX_BATCH_DELAY_MS = 20;
const OUTBOX_BATCH_SIZE = 500;

export const runExecutorModule = grpcServiceModule({
  name: 'RunExecutor',
  dependsOn: ['AgentRegistry', 'Session', 'Attachment', 'Governance'],
  async setup({ config, logger, engines, addressOf }, grpc) {
    const database = await engines.storage.open<RunDatabase>('runs', runMigrations);
    const repository = createRunRepository(database.db, database.schema);
    const postgres = config.Stores.Postgres;
    const readView =
      database.engine === 'postgres'
        ? { target: { schema: postgres.SchemaName, name: 'runs_v1' }, enabled: postgres.EnableReadView }
        : {
            target: { schema: 'public', name: `${config.Stores.Embedded.TablePrefix}runs_v1` },
            enabled: config.Stores.Embedded.EnableReadView,
          };
    await repository.applyReadView(readView.target, readView.enabled);
    const registryChannel = createChannel(addressOf('AgentRegistry'));
    const sessionChannel = createChannel(addressOf('Session'));
    const registry = createServiceClient(AgentRegistryServiceDefinition, registryChannel);
    const sessions = createServiceClient(SessionServiceDefinition, sessionChannel);
    const attachmentChannel = createChannel(addressOf('Attachment'));
    const attachments = createServiceClient(AttachmentServiceDefinition, attachmentChannel);
    const governanceChannel = createChannel(addressOf('Governance'));
    const governance = createServiceClient(GovernanceServiceDefinition, governanceChannel);
    let catalog: { at: number; tools: Promise<Map<string, { description: string; inputSchema: Record<string, unknown> }>> } | undefined;

    const relay = createOutboxRelay({
      repository,
      eventLog: engines.eventLog,
      logger,
      settings: { pollIntervalMs: OUTBOX_POLL_MS, batchDelayMs: OUTBOX_BATCH_DELAY_MS, batchSize: OUTBOX_BATCH_SIZE },
    });
    relay.start();
    const engine = createRunEngine({
      eventsStored: () => relay.nudge(),
      config,
      logger,
      repository,
      audit: async (caller, entry) => void (await governance.recordAudit(entry, { caller })),
      pubsub: engines.pubsub,
      models: createModelResolver(config, createConcurrencyLimiter(config.ModelConcurrency.MaxConcurrentCallsPerProvider)),
      breaker: createCircuitBreaker({
        enabled: config.CircuitBreaker.Enabled,
        failureThreshold: config.CircuitBreaker.FailureThreshold,
        breakDurationMs: config.CircuitBreaker.BreakDuration,
      }),
      agents: {
        async load(caller, name) {
          const record = recordFromProto((await registry.resolveAgent({ name }, { caller })).agent);
          return { definition: record.definition, version: record.version ?? null };
        },
        async estimate(caller, name, messages, parameters) {
          const estimate = await registry.estimateRun({ name, messages, parameters: Object.fromEntries(parameters) }, { caller });
          return { ...estimate, allowedPromptTokens: estimate.allowedPromptTokens ?? null };
        },
      },
      attachments: {
        async read(caller, id) {
          const chunks: Uint8Array[] = [];
          let descriptor: { fileName: string; mediaType: string } | undefined;
          for await (const message of attachments.downloadAttachment({ id }, { caller })) {
            if (message.part?.$case === 'descriptor') descriptor = message.part.value;
            if (message.part?.$case === 'chunk') chunks.push(message.part.value);
          }
          if (!descriptor) throw new HangarError('unavailable', `attachment ${id} came without its descriptor`, {}, 'service_unavailable');
          return { id, fileName: descriptor.fileName, mediaType: descriptor.mediaType, bytes: Buffer.concat(chunks) };
        },
      },
      sessions: {
        async open(caller, sessionId, agentName) {
          return (await sessions.openSession({ sessionId, agentName }, { caller })).messages;
        },
        async append(caller, sessionId, messages) {
          await sessions.appendMessages({ sessionId, messages }, { caller });
        },
      },
      toolCatalog: () => {
        if (!catalog || Date.now() - catalog.at > TOOL_CATALOG_TTL_MS) {
          const tools = registry
            .listTools({}, { caller: { tenantId: config.DefaultTenantId, actor: 'run-executor' } })
            .then(
              (response) =>
                new Map(
                  response.tools.map((entry) => [entry.name, { description: entry.description, inputSchema: entry.inputSchema ?? {} }]),
                ),
            );
          catalog = { at: Date.now(), tools };
          tools.catch(() => (catalog = undefined));
        }
        return catalog.tools;
      },
    });
    grpc.server.add(RunExecutorServiceDefinition, runExecutorGrpc(engine));
    const scheduling = config.Scheduling;
    const worker =
      scheduling.Enabled && scheduling.RunWorker && config.AsyncRun.Enabled
        ? createJobWorker({
            repository,
            engine,
            pubsub: engines.pubsub,
            logger,
            settings: {
              pollIntervalMs: scheduling.PollInterval,
              leaseMs: scheduling.LeaseDuration,
              maxConcurrentJobs: scheduling.MaxConcurrentJobs,
              maxAttempts: config.AsyncRun.MaxAttempts,
              lanes: scheduling.Lanes,
              maxConcurrentJobsPerLane: scheduling.MaxConcurrentJobsPerLane,
            },
          })
        : undefined;
    await worker?.start();
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
    return {
      close: async () => {
        clearInterval(scanner);
        clearInterval(approvalScanner);
        await worker?.stop();
        await engine.drain();
        await relay.stop();
        registryChannel.close();
        sessionChannel.close();
        attachmentChannel.close();
        governanceChannel.close();
      },
    };
  },
});

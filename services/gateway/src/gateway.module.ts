import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import {
  AgentRegistryServiceDefinition,
  AttachmentServiceDefinition,
  GovernanceServiceDefinition,
  RunExecutorServiceDefinition,
  SessionServiceDefinition,
  SkillServiceDefinition,
  WebhookServiceDefinition,
  ScheduleServiceDefinition,
  WorkflowServiceDefinition,
  ImageServiceDefinition,
  VoiceServiceDefinition,
  ToolServerServiceDefinition,
  KnowledgeServiceDefinition,
  EvaluationServiceDefinition,
  RetentionPolicyServiceDefinition,
  quotaNoticeChannel,
  QuotaThresholdNoticeSchema,
} from '@hangar/contracts';
import { parseMessage, type PubSub } from '@hangar/messaging';
import { createChannel, createServiceClient, HANGAR_VERSION, SERVICE_NAMES, type HangarModule, type Logger } from '@hangar/platform';
import { createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { createApiKeyVerifier } from './http/api-key-auth.js';
import { createAuthenticator } from './http/auth.js';
import { createRateLimit } from './http/rate-limit.js';
import type { RunNotices } from './http/run-stream.js';
import { createTenantStatus } from './http/tenant-status.js';
import { refuseNewRunsWhileDraining } from './http/draining.js';
import { createRunEventHub } from './routes/runs/run-event-hub.js';
import { loadHostPolicies } from './http/host-policies.js';
import { roleAuthorizations } from './routes/system.routes.js';
import { loadRunAuthorization } from './http/run-authorization.js';
import { malformedHttpAnswer } from './http/problem.js';
import { routeUpgrades } from './http/upgrade.js';
import { createGatewayApp, gatewayRoutes } from './gateway.app.js';
import type { GatewayContext } from './gateway.context.js';

const HEALTH_TIMEOUT_MS = 2000;
/** Events a shared run event stream keeps for readers that join it late. */
const SHARED_RUN_EVENTS_KEPT = 512;

/** The HTTP edge: authenticates, resolves the tenant, and forwards to the services over gRPC. */
/** Node's default is 5 s. */
const IDLE_KEEP_ALIVE_MS = 65_000;

export const gatewayModule: HangarModule = {
  name: 'Gateway',
  dependsOn: [...SERVICE_NAMES],
  async start({ config, logger, engines, metrics, addressOf }) {
    const channels = Object.fromEntries(SERVICE_NAMES.map((name) => [name, createChannel(addressOf(name))]));
    const healthClients = Object.entries(channels).map(([name, channel]) => [name, createClient(HealthDefinition, channel)] as const);
    const governance = createServiceClient(GovernanceServiceDefinition, channels.Governance);
    const systemCaller = { tenantId: config.DefaultTenantId, actor: 'gateway' };
    const apiKeys = createApiKeyVerifier({ governance, pubsub: engines.pubsub, systemCaller, logger });
    await apiKeys.start();
    const tenants = createTenantStatus({ governance, pubsub: engines.pubsub, systemCaller, logger });
    await tenants.start();
    const routes = gatewayRoutes();
    const policies = await loadHostPolicies(config);
    const rateLimit = await createRateLimit(config, logger);
    let draining = false;
    const runs = refuseNewRunsWhileDraining(createServiceClient(RunExecutorServiceDefinition, channels.RunExecutor), () => draining);
    const context: GatewayContext = {
      config,
      logger,
      metrics,
      authenticator: createAuthenticator(config, apiKeys),
      roleScopes: (role) => roleAuthorizations(routes)[role],
      rateLimit,
      runNotices: config.Quotas.PublishThresholdToRunStream ? quotaNotices(engines.pubsub, logger) : undefined,
      tenants,
      policies,
      registry: createServiceClient(AgentRegistryServiceDefinition, channels.AgentRegistry),
      sessions: createServiceClient(SessionServiceDefinition, channels.Session),
      runs,
      runEvents: createRunEventHub({
        open: (caller, runId, afterSeq, signal) => runs.streamRunEvents({ runId, afterSeq }, { caller, signal }),
        keep: SHARED_RUN_EVENTS_KEPT,
      }),
      attachments: createServiceClient(AttachmentServiceDefinition, channels.Attachment),
      governance,
      skills: createServiceClient(SkillServiceDefinition, channels.Skill),
      webhooks: createServiceClient(WebhookServiceDefinition, channels.Governance),
      retention: createServiceClient(RetentionPolicyServiceDefinition, channels.Governance),
      schedules: createServiceClient(ScheduleServiceDefinition, channels.RunExecutor),
      workflows: createServiceClient(WorkflowServiceDefinition, channels.RunExecutor),
      images: createServiceClient(ImageServiceDefinition, channels.RunExecutor),
      voice: createServiceClient(VoiceServiceDefinition, channels.RunExecutor),
      // A frame of audio is small; one larger than 1 MiB is refused with close code 1009.
      webSockets: new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 }),
      toolServers: createServiceClient(ToolServerServiceDefinition, channels.AgentRegistry),
      knowledge: createServiceClient(KnowledgeServiceDefinition, channels.Knowledge),
      evaluation: createServiceClient(EvaluationServiceDefinition, channels.Evaluation),
      authorizeRun: await loadRunAuthorization(config.Hangar.Api.RunAuthorizationModule),
      stores: { sql: engines.storage.engine, events: engines.eventLog.kind, cache: engines.pubsub.kind },
      version: HANGAR_VERSION,
      draining: () => draining,
      async checkHealth() {
        const entries = await Promise.all(
          healthClients.map(async ([name, client]) => {
            try {
              const { status } = await client.check({ service: '' }, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
              return [name, status === 1 ? 'SERVING' : 'NOT_SERVING'] as const;
            } catch {
              return [name, 'UNREACHABLE'] as const;
            }
          }),
        );
        return Object.fromEntries(entries);
      },
    };
    const app = createGatewayApp(context);
    const server: Server = createServer(app);
    const dropPendingHandshakes = routeUpgrades(server, app);
    // An idle connection is kept longer than a load balancer's or client's own idle timeout (60 s on
    // common ones): a server that closes first fails the request the other side just sent on it.
    server.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;
    server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      if (socket.writable && error.code !== 'ECONNRESET') socket.end(malformedHttpAnswer(error));
      else socket.destroy();
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.Gateway.Port, config.Gateway.Host, () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : config.Gateway.Port);
      });
    });
    return {
      httpPort: port,
      // Streams in progress go on; the stop that follows waits for them as it closes the listener.
      async drain() {
        draining = true;
      },
      async stop() {
        dropPendingHandshakes();
        await closeWebSockets(context.webSockets);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await apiKeys.stop();
        await tenants.stop();
        await rateLimit?.close();
        for (const channel of Object.values(channels)) channel.close();
      },
    };
  },
};

/** Closes every WebSocket with 1001 (going away), and cuts those that do not answer within a second. */
async function closeWebSockets(webSockets: WebSocketServer): Promise<void> {
  const open = [...webSockets.clients];
  const closed = open.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
  for (const socket of open) socket.close(1001, 'the gateway is stopping');
  await Promise.race([Promise.all(closed), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  for (const socket of webSockets.clients) socket.terminate();
  webSockets.close();
}

/** Notices governance publishes for a run tree, validated before they reach a client (a stray message is dropped). */
function quotaNotices(pubsub: PubSub, logger: Logger): RunNotices {
  return (rootRunId, onNotice) =>
    pubsub.subscribe(quotaNoticeChannel(rootRunId), (message) => {
      const notice = QuotaThresholdNoticeSchema.safeParse(parseMessage(message));
      if (notice.success) onNotice(notice.data);
      else logger.warn({ rootRunId }, 'a quota threshold notice that is not valid was dropped');
    });
}

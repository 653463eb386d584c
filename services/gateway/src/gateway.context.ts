import type { WebSocketServer } from 'ws';
import type {
  AgentRegistryServiceDefinition,
  AttachmentServiceDefinition,
  GovernanceServiceDefinition,
  RunAuthorizationHandler,
  RunExecutorServiceDefinition,
  runPb,
  SessionServiceDefinition,
  SkillServiceDefinition,
  WebhookServiceDefinition,
  RetentionPolicyServiceDefinition,
  ScheduleServiceDefinition,
  WorkflowServiceDefinition,
  ImageServiceDefinition,
  VoiceServiceDefinition,
  ToolServerServiceDefinition,
  KnowledgeServiceDefinition,
  EvaluationServiceDefinition,
} from '@hangar/contracts';
import type { CallerOptions, HangarConfig, Logger, ProcessMetrics, Role } from '@hangar/platform';
import type { Client } from 'nice-grpc';
import type { RunEventHub } from './routes/runs/run-event-hub.js';
import type { createAuthenticator, Scope } from './http/auth.js';
import type { HostPolicies } from './http/host-policies.js';
import type { RateLimit } from './http/rate-limit.js';
import type { RunNotices } from './http/run-stream.js';
import type { TenantStatus } from './http/tenant-status.js';

/** What route handlers may use: configuration, the authenticator and the service clients. */
export interface GatewayContext {
  config: HangarConfig;
  logger: Logger;
  /** This process's metrics, shown at `/metrics`. */
  metrics: ProcessMetrics;
  authenticator: ReturnType<typeof createAuthenticator>;
  /** The scopes a role can use on this gateway's routes (an API key created without scopes holds these). */
  roleScopes(role: Role): Scope[];
  registry: Client<typeof AgentRegistryServiceDefinition, CallerOptions>;
  sessions: Client<typeof SessionServiceDefinition, CallerOptions>;
  runs: Client<typeof RunExecutorServiceDefinition, CallerOptions>;
  /** Run event streams shared by every reader of one run in this gateway. */
  runEvents: RunEventHub<runPb.StreamRunEventsResponse>;
  attachments: Client<typeof AttachmentServiceDefinition, CallerOptions>;
  governance: Client<typeof GovernanceServiceDefinition, CallerOptions>;
  skills: Client<typeof SkillServiceDefinition, CallerOptions>;
  /** Webhook subscriptions and deliveries (served by the governance process). */
  webhooks: Client<typeof WebhookServiceDefinition, CallerOptions>;
  /** Schedules (served by the run-executor process). */
  schedules: Client<typeof ScheduleServiceDefinition, CallerOptions>;
  /** Workflows and their runs (served by the run-executor process). */
  workflows: Client<typeof WorkflowServiceDefinition, CallerOptions>;
  /** Image generation (served by the run-executor process). */
  images: Client<typeof ImageServiceDefinition, CallerOptions>;
  /** Speech in and out (served by the run-executor process). */
  voice: Client<typeof VoiceServiceDefinition, CallerOptions>;
  /** The WebSockets this gateway holds open (voice conversations), closed when it stops. */
  webSockets: WebSocketServer;
  /** MCP tool servers (served by the agent-registry process). */
  toolServers: Client<typeof ToolServerServiceDefinition, CallerOptions>;
  /** Knowledge collections, documents and search. */
  knowledge: Client<typeof KnowledgeServiceDefinition, CallerOptions>;
  /** Eval suites and their runs. */
  evaluation: Client<typeof EvaluationServiceDefinition, CallerOptions>;
  /** Retention policies (served by the governance process). */
  retention: Client<typeof RetentionPolicyServiceDefinition, CallerOptions>;
  /** The host's role policies and authorization policy (SPEC Authentication 3 and 6). */
  policies: HostPolicies;
  /** Quota threshold notices for streamed runs, with Quotas:PublishThresholdToRunStream. */
  runNotices?: RunNotices;
  /** Whether a tenant is enabled (403 tenant_disabled when not). */
  tenants: TenantStatus;
  /** RateLimit:*, when enabled. */
  rateLimit?: RateLimit;
  /** The host's run-authorization handler, when one is registered. */
  authorizeRun?: RunAuthorizationHandler;
  /** Names the active engines for `/api/meta`. */
  stores: { sql: string; events: string; cache: string };
  version: string;
  /** True from a drain's start (`Drain:Enabled`, SIGTERM): not ready, no new runs. */
  draining(): boolean;
  /** grpc.health.v1 status of every backing service, by service name. */
  checkHealth(): Promise<Record<string, string>>;
}

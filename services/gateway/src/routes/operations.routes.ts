import { z } from 'zod';
import { maskedConfiguration, metricsScrapeAllowed, notFound, PROMETHEUS_CONTENT_TYPE, unauthorized } from '@hangar/platform';
import { problemResponse } from '../api.schemas.js';
import { requirePlatform } from '../http/platform-tenant.js';
import { defineRoute } from '../http/route.js';

const ModelHealthSchema = z
  .object({
    provider: z.string(),
    model: z.string(),
    status: z.enum(['Healthy', 'Degraded', 'Unhealthy', 'Unknown']),
    circuit: z.enum(['Closed', 'Open', 'HalfOpen']),
    lastSuccessAt: z.iso.datetime().nullable(),
    lastFailureAt: z.iso.datetime().nullable(),
    latencyMsP50: z.number().int().nullable(),
    checkedAt: z.iso.datetime(),
  })
  .meta({ id: 'ModelHealth' });

const EngineHealthSchema = z.object({
  name: z.enum(['sql', 'pubsub', 'eventLog']),
  kind: z.string(),
  status: z.enum(['Healthy', 'Unhealthy', 'Unknown']),
  detail: z.string().optional(),
});

const DiagnosticsSchema = z
  .object({
    version: z.string(),
    startedAt: z.iso.datetime(),
    uptimeSeconds: z.number().int(),
    services: z.record(z.string(), z.string()).describe('grpc.health.v1 status of each backing service'),
    engines: z.array(EngineHealthSchema).nullable().describe('null when the run executor did not answer'),
    jobQueueDepth: z.record(z.string(), z.number().int()).nullable().describe('jobs waiting for a worker, per lane'),
    openCircuits: z.array(ModelHealthSchema).nullable().describe('models whose circuit is Open or HalfOpen'),
    configuration: z.record(z.string(), z.unknown()).describe("the gateway process's configuration, every secret masked as ***"),
  })
  .meta({ id: 'Diagnostics' });

type ModelHealth = z.infer<typeof ModelHealthSchema>;

const processStartedAt = new Date(Date.now() - process.uptime() * 1000).toISOString();

/** Prometheus metrics, diagnostics and model health (API.md "Operations"). */
export const operationsRoutes = [
  defineRoute({
    method: 'get',
    path: '/metrics',
    outsidePrefix: true,
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'The metrics of this process in the Prometheus text format (runs, tokens, cost, model calls, HTTP and gRPC durations, and the job queue and quota gauges when enabled). Served at /metrics whatever Hangar:Api:Prefix is; needs no credential unless Hangar:Api:MetricsToken is set, then `Authorization: Bearer <MetricsToken>`.',
    tag: 'Operations',
    auth: 'none',
    responses: {
      200: { description: 'The exposition', contentType: 'text/plain', schema: z.string() },
      401: problemResponse('Hangar:Api:MetricsToken is set and the request does not carry it'),
    },
    async handler({ request, response }, context) {
      if (!metricsScrapeAllowed(context.config.Hangar.Api.MetricsToken, request.get('authorization'))) {
        throw unauthorized('/metrics needs the metrics token (Hangar:Api:MetricsToken)');
      }
      response
        .status(200)
        .type(PROMETHEUS_CONTENT_TYPE)
        .send(await context.metrics.scrape());
      return { status: 200, sent: true };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/models/health',
    operationId: 'getModelHealth',
    summary: 'Health of each model',
    description:
      "Each configured provider's models (its default, its listed models and any a run called) with a status from the calls runs and background probes made, the circuit breaker's state, the last success and failure and the median latency. Computed at most once per Health:CacheTtl.",
    tag: 'Operations',
    auth: { role: 'Reader', scope: 'PlatformRead' },
    responses: { 200: { description: 'Model health', schema: z.array(ModelHealthSchema) } },
    async handler({ caller }, context) {
      const { models } = await context.runs.getModelHealth({}, { caller });
      return { status: 200, body: models.map(modelHealthFromProto) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/diagnostics',
    operationId: 'getDiagnostics',
    summary: 'Diagnose the deployment',
    description:
      'Version, uptime, the health of each backing service and engine, the job queue per lane, open circuits and the configuration with every secret masked. Only from the platform tenant or with the static token; 404 unless Hangar:Api:EnableDiagnosticsEndpoint is true.',
    tag: 'Operations',
    auth: { role: 'Admin', scope: 'PlatformRead' },
    responses: {
      200: { description: 'Diagnostics', schema: DiagnosticsSchema },
      404: problemResponse('Hangar:Api:EnableDiagnosticsEndpoint is false'),
    },
    async handler({ caller, principal }, context) {
      if (!context.config.Hangar.Api.EnableDiagnosticsEndpoint)
        throw notFound('diagnostics are off (Hangar:Api:EnableDiagnosticsEndpoint)');
      requirePlatform(principal, caller, context);
      const [services, executor, health] = await Promise.all([
        context.checkHealth(),
        context.runs.getDiagnostics({}, { caller }).catch(() => undefined),
        context.runs.getModelHealth({}, { caller }).catch(() => undefined),
      ]);
      return {
        status: 200,
        body: {
          version: context.version,
          startedAt: processStartedAt,
          uptimeSeconds: Math.floor(process.uptime()),
          services,
          engines: executor?.engines ?? null,
          jobQueueDepth: executor?.jobQueueDepth ?? null,
          openCircuits: health?.models.map(modelHealthFromProto).filter((model) => model.circuit !== 'Closed') ?? null,
          configuration: maskedConfiguration(context.config),
        },
      };
    },
  }),
];

function modelHealthFromProto(model: {
  provider: string;
  model: string;
  status: string;
  circuit: string;
  lastSuccessAt?: string;
  lastFailureAt?: string;
  latencyMsP50?: number;
  checkedAt: string;
}): ModelHealth {
  return {
    ...model,
    status: model.status as ModelHealth['status'],
    circuit: model.circuit as ModelHealth['circuit'],
    lastSuccessAt: model.lastSuccessAt ?? null,
    lastFailureAt: model.lastFailureAt ?? null,
    latencyMsP50: model.latencyMsP50 ?? null,
  };
}

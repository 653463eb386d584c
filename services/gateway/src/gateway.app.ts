import express, { type NextFunction, type Request, type Response } from 'express';
import { context as otelContext, trace } from '@opentelemetry/api';
import { extractContext, SpanKind, tracer } from '@hangar/platform';
import { isLoopback, remoteAccessDenied } from './http/auth.js';
import { jsonBodyGuard } from './http/input-guard.js';
import { problemBody, problemHandler, sendProblem } from './http/problem.js';
import { expressPath, mountRoute, servedPath, type RouteSpec } from './http/route.js';
import { openAIErrors } from './http/openai-error.js';
import { openApiDocumentOf } from './http/openapi.js';
import { httpDurations } from './http/http-durations.js';
import type { GatewayContext } from './gateway.context.js';
import { agentRoutes } from './routes/agents.routes.js';
import { apiKeyRoutes } from './routes/api-keys.routes.js';
import { tenantRoutes } from './routes/tenants.routes.js';
import { webhookRoutes } from './routes/webhooks.routes.js';
import { retentionRoutes } from './routes/retention.routes.js';
import { scheduleRoutes } from './routes/schedules.routes.js';
import { workflowRoutes } from './routes/workflows.routes.js';
import { imageRoutes } from './routes/images.routes.js';
import { voiceRoutes } from './routes/voice.routes.js';
import { voiceConversationRoutes } from './routes/voice-conversations.routes.js';
import { toolServerRoutes } from './routes/tool-servers.routes.js';
import { knowledgeRoutes } from './routes/knowledge.routes.js';
import { evaluationRoutes } from './routes/evaluation/evaluation.routes.js';
import { experimentRoutes } from './routes/evaluation/experiments.routes.js';
import { a2aExposureRoutes } from './routes/exposure/a2a-exposure.routes.js';
import { mcpExposureRoutes } from './routes/exposure/mcp-exposure.routes.js';
import { attachmentRoutes } from './routes/attachments.routes.js';
import { auditRoutes } from './routes/audit.routes.js';
import { quotaRoutes } from './routes/quotas.routes.js';
import { catalogRoutes } from './routes/catalog.routes.js';
import { runRoutes } from './routes/runs/runs.routes.js';
import { openAIRoutes } from './routes/openai/openai.routes.js';
import { sessionRoutes } from './routes/sessions.routes.js';
import { skillScriptGrantRoutes } from './routes/skill-script-grants.routes.js';
import { skillRoutes } from './routes/skills.routes.js';
import { systemRoutes } from './routes/system.routes.js';
import { consoleRoutes } from './routes/console.routes.js';
import { operationsRoutes } from './routes/operations.routes.js';

const JSON_BODY_LIMIT = '1mb';

/** Every route the gateway serves; the OpenAPI document and `/api/meta` roles are derived from it. */
export function gatewayRoutes(): RouteSpec<any, any, any>[] {
  const routes: RouteSpec<any, any, any>[] = [
    ...agentRoutes,
    ...runRoutes,
    ...catalogRoutes,
    ...sessionRoutes,
    ...attachmentRoutes,
    ...auditRoutes,
    ...quotaRoutes,
    ...skillRoutes,
    ...skillScriptGrantRoutes,
    ...apiKeyRoutes,
    ...tenantRoutes,
    ...webhookRoutes,
    ...scheduleRoutes,
    ...workflowRoutes,
    ...imageRoutes,
    ...voiceRoutes,
    ...voiceConversationRoutes,
    ...toolServerRoutes,
    ...knowledgeRoutes,
    ...evaluationRoutes,
    ...experimentRoutes,
    ...mcpExposureRoutes,
    ...a2aExposureRoutes,
    ...retentionRoutes,
    ...openAIRoutes,
    ...operationsRoutes,
    ...consoleRoutes,
  ];
  routes.push(...systemRoutes(() => routes));
  return routes;
}

function tracing(context: GatewayContext) {
  return (request: Request, response: Response, next: NextFunction) => {
    const parent = extractContext(request.headers as Record<string, string>);
    const span = tracer().startSpan(`${request.method} ${request.path}`, { kind: SpanKind.SERVER }, parent);
    const started = performance.now();
    response.once('close', () => {
      span.setAttribute('http.response.status_code', response.statusCode);
      span.end();
      const fields = {
        method: request.method,
        path: request.path,
        status: response.statusCode,
        durationMs: Math.round(performance.now() - started),
      };
      // Classified 5xx (501, 503) are logged where they are raised; only an unexpected 500 warns here.
      if (response.statusCode === 500) context.logger.warn(fields, 'request failed');
      else context.logger.debug(fields, 'request');
    });
    otelContext.with(trace.setSpan(parent, span), next);
  };
}

function remoteAccessGuard(context: GatewayContext) {
  return (request: Request, _response: Response, next: NextFunction) => {
    if (!context.config.Hangar.Api.AllowRemoteAccess && !isLoopback(request.socket.remoteAddress)) throw remoteAccessDenied();
    next();
  };
}

/** CORS only for `AllowedOrigins` (empty: no CORS header is ever sent). */
function cors(context: GatewayContext) {
  const { AllowedOrigins } = context.config.Hangar.Api;
  const allowHeaders = [
    'Authorization',
    'Content-Type',
    'Idempotency-Key',
    'Prefer',
    'Last-Event-ID',
    'X-API-Key',
    context.config.Tenancy.HeaderName,
  ];
  return (request: Request, response: Response, next: NextFunction) => {
    const origin = request.get('origin');
    if (!origin || !(AllowedOrigins.includes('*') || AllowedOrigins.includes(origin))) return next();
    response.set('Access-Control-Allow-Origin', origin).vary('Origin');
    response.set(
      'Access-Control-Expose-Headers',
      [
        'Location',
        'Retry-After',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'Idempotent-Replayed',
        'Preference-Applied',
        'WWW-Authenticate',
        // A browser client of /v1 and of useChat reads these too.
        'X-Hangar-Run-Id',
        'X-Hangar-Ignored-Parameters',
        'X-Hangar-Characters',
        'X-Hangar-Cost',
        'X-Hangar-Currency',
        'x-vercel-ai-ui-message-stream',
      ].join(', '),
    );
    if (request.method === 'OPTIONS' && request.get('access-control-request-method')) {
      response.set({
        'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE',
        'Access-Control-Allow-Headers': allowHeaders.join(', '),
        'Access-Control-Max-Age': '600',
      });
      response.status(204).end();
      return;
    }
    next();
  };
}

/** 405 with `Allow` for a known path and the wrong method; 404 for anything else. */
function unmatched(routes: RouteSpec<any, any, any>[], prefix: string) {
  const patterns = routes.map((route) => ({
    method: route.method.toUpperCase(),
    regex: new RegExp(`^${expressPath(servedPath(route, prefix)).replace(/[.]/g, '\\.').replace(/:\w+/g, '[^/]+')}/?$`),
  }));
  return (request: Request, response: Response) => {
    const allowed = patterns.filter((pattern) => pattern.regex.test(request.path)).map((pattern) => pattern.method);
    if (allowed.length) {
      sendProblem(
        request,
        response,
        problemBody(request, 405, 'method_not_allowed', `${request.method} is not allowed here; use ${allowed.join(', ')}`),
        {
          Allow: allowed.join(', '),
        },
      );
      return;
    }
    sendProblem(request, response, problemBody(request, 404, 'not_found', `no route for ${request.method} ${request.path}`));
  };
}

export function createGatewayApp(context: GatewayContext) {
  const prefix = context.config.Hangar.Api.Prefix;
  const routes = gatewayRoutes();
  // Built now, not by the first request that asks for it (see openApiDocumentOf).
  openApiDocumentOf(routes, { prefix, version: context.version });
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(tracing(context));
  app.use(httpDurations(context.metrics));
  app.use(`${prefix}/v1`, openAIErrors());
  app.use(remoteAccessGuard(context));
  app.use(cors(context));
  app.use(express.json({ limit: JSON_BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] }));
  app.use(jsonBodyGuard());

  const api = express.Router({ caseSensitive: true });
  const root = express.Router({ caseSensitive: true });
  for (const route of routes) mountRoute(route.outsidePrefix ? root : api, route, context);
  app.use(root);
  app.use(prefix || '/', api);
  app.use(unmatched(routes, prefix));
  app.use(problemHandler(context.logger));
  return app;
}

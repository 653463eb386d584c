import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { jsonPath } from '@hangar/contracts';
import type { RunOperation } from '@hangar/contracts';
import { forbidden, HangarError, notFound, validationError, type Caller, type Role } from '@hangar/platform';
import { authorize, callerOf, resolveTenant, type Principal, type Scope } from './auth.js';
import type { GatewayContext } from '../gateway.context.js';
import type { ApiTag } from './api-tags.js';
import { withIdempotency } from './idempotency.js';
import { checkPathAndQuery } from './input-guard.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

/** A response header the route sends, for the OpenAPI document. */
export interface ResponseHeader {
  description: string;
  /** Defaults to a string. */
  schema?: z.ZodType;
}

export interface RouteResponse {
  description: string;
  /** The body as `contentType` (default `application/json`). */
  schema?: z.ZodType;
  contentType?: string;
  /**
   * A `text/event-stream` body: the schema of one frame `{ event, id?, data }`, a union of the
   * frames the stream sends. Beside `schema` when the route answers either way (content negotiated
   * by request headers).
   */
  eventStream?: z.ZodType;
  headers?: Record<string, ResponseHeader>;
}

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  principal: Principal | undefined;
  request: Request;
  response: Response;
  /** Aborted when the client goes away before the answer is complete (heard from the start of the request). */
  signal: AbortSignal;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The handler streamed the response itself. */
  sent?: boolean;
}

/**
 * One HTTP operation: the same object registers the express handler, checks role ∩ scope,
 * parses input with zod, and becomes an entry of the OpenAPI document.
 */
export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  method: Method;
  /** OpenAPI-style path below the prefix, e.g. `/api/agents/{name}`. */
  path: string;
  operationId: string;
  /** A short title, without a trailing period. */
  summary: string;
  /** What the operation does and its notable rules and errors, in 1–3 sentences. */
  description: string;
  tag: ApiTag;
  auth: { role: Role; scope: Scope } | 'none';
  /** Served at `path` whatever `Hangar:Api:Prefix` is: the health probes, which orchestrators call at a fixed path. */
  outsidePrefix?: boolean;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  /**
   * Request headers the handler reads (`Prefer`, `Last-Event-ID`), as a zod object of optional
   * described strings: for the OpenAPI document only. `Idempotency-Key` is added by itself.
   */
  documentedHeaders?: z.ZodType;
  /** JSON body schema; `raw` hands the parsed JSON to the handler (for validate, which reports shape errors). */
  body?: z.ZodType<B>;
  rawBody?: boolean;
  /**
   * A non-JSON request body, for the OpenAPI document only (the handler reads the stream); `json`
   * when the route also takes a JSON body, which the handler then parses itself.
   */
  documentedBody?: { contentType: string; schema: Record<string, unknown>; json?: z.ZodType };
  /**
   * Asks the host's run-authorization handler first. A denied list or upload is 403 (`forbid`);
   * a denied single-record operation is 404 (`hide`), like an unknown record.
   */
  runAuthorization?: { operation: RunOperation; denial: 'forbid' | 'hide'; resourceId?: (params: P) => string };
  responses: Record<number, RouteResponse>;
  /**
   * The body of the error answers the document adds by itself (400, 401, 403, 429, 500), when it
   * is not RFC 9457 problem+json (the OpenAI-compatible routes answer in OpenAI's error shape).
   */
  errorBody?: z.ZodType;
  handler(input: HandlerInput<P, Q, B>, context: GatewayContext): Promise<HandlerResult>;
}

export const defineRoute = <P, Q, B>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> => spec;

export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw validationError(
    `the request ${where} is not valid`,
    parsed.error.issues.map((issue) => ({ path: jsonPath(issue.path) || where, message: issue.message })),
  );
}

export function requireJsonBody(request: Request): unknown {
  if (request.body === undefined) {
    const length = Number(request.get('content-length') ?? 0);
    if (length > 0 || request.get('transfer-encoding')) {
      throw new HangarError('unsupportedMediaType', 'the request body must be application/json');
    }
    throw validationError('a JSON request body is required', [{ path: 'body', message: 'is required' }]);
  }
  return request.body;
}

/** The path a route answers at: below the prefix unless it is `outsidePrefix`. */
export const servedPath = (route: Pick<RouteSpec, 'path' | 'outsidePrefix'>, prefix: string) =>
  route.outsidePrefix ? route.path : `${prefix}${route.path}`;

/** `/api/agents/{name}` → `/api/agents/:name` */
export const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

export function mountRoute(router: Router, route: RouteSpec<any, any, any>, context: GatewayContext) {
  router[route.method](expressPath(route.path), async (request, response) => {
    // Listened to before any await, so a client that leaves during authentication is not missed.
    const departure = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) departure.abort();
    });
    let principal: Principal | undefined;
    if (route.auth !== 'none') principal = await context.authenticator.authenticate(request);
    const tenantId = resolveTenant(context.config, request, principal);
    const caller = callerOf(principal, tenantId);
    if (route.auth !== 'none') {
      await authorize(principal!, caller, route.auth, context.policies);
      await context.policies.authorizeRequest(request.method, route.path, principal!, caller);
      // After authorization, so a caller who may not act in the tenant does not learn whether it is disabled.
      await context.tenants.requireEnabled(tenantId);
      await context.rateLimit?.admit(request, response, principal!, caller);
    }
    checkPathAndQuery(request.params, request.query);
    const params = route.params ? parseOrThrow(route.params, request.params, 'path') : request.params;
    const query = route.query ? parseOrThrow(route.query, request.query, 'query') : request.query;
    let body: unknown;
    if (route.body || route.rawBody) {
      const json = requireJsonBody(request);
      body = route.body ? parseOrThrow(route.body, json, 'body') : json;
    }
    if (route.runAuthorization && context.authorizeRun) {
      const { operation, denial, resourceId } = route.runAuthorization;
      const id = resourceId?.(params);
      if (!(await context.authorizeRun({ operation, ...caller, resourceId: id }))) {
        // The 404 says exactly what the service says of an unknown record ("session x not found").
        const kind = operation.slice(0, operation.indexOf('.') - 1);
        throw denial === 'forbid' ? forbidden(`the run-authorization handler denied ${operation}`) : notFound(`${kind} ${id} not found`);
      }
    }
    const execute = () => route.handler({ params, query, body, caller, principal, request, response, signal: departure.signal }, context);
    const idempotencyKey = request.get('idempotency-key');
    const result =
      idempotencyKey !== undefined && route.method === 'post' && (route.body || route.rawBody) && context.config.Idempotency.Enabled
        ? await withIdempotency(idempotencyKey, `${route.method.toUpperCase()} ${route.path}`, request, response, caller, context, execute)
        : await execute();
    if (!result || result.sent) return;
    response.status(result.status).set(result.headers ?? {});
    if (result.body === undefined) response.end();
    else response.json(result.body);
  });
}

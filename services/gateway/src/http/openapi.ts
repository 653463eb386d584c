import type { z } from 'zod';
import { ProblemSchema } from '../api.schemas.js';
import { API_TAGS } from './api-tags.js';
import { createSchemaConverter, parametersOf, type JsonSchema, type SchemaConverter } from './openapi-schemas.js';
import { servedPath, type RouteResponse, type RouteSpec } from './route.js';

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Replays the first response for the same request with Idempotent-Replayed: true for a day; 422 idempotency_key_reuse for another request, 409 idempotency_in_progress while the first executes',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

const IDEMPOTENT_REPLAYED = {
  description: 'true when this is the stored first response to the same Idempotency-Key, replayed',
  schema: { type: 'string', enum: ['true'] },
};

/** Sent on every authenticated answer while RateLimit:Enabled (API.md "Rate limiting"). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per window (RateLimit:PermitLimit)', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window ends', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait (429 only)', schema: { type: 'integer' } },
};
const { 'Retry-After': _retryAfter, ...WINDOW_HEADERS } = RATE_LIMIT_HEADERS;

const WWW_AUTHENTICATE = { description: 'Bearer: the credential schemes the gateway accepts', schema: { type: 'string' } };

const isIdempotent = (route: RouteSpec<any, any, any>) => route.method === 'post' && Boolean(route.body || route.rawBody);
const isSuccess = (status: string) => status.startsWith('2');

/** The JSON and event-stream bodies of one declared response. */
function contentOf(response: RouteResponse, toSchema: SchemaConverter) {
  const content: Record<string, { schema: JsonSchema }> = {};
  if (response.schema) content[response.contentType ?? 'application/json'] = { schema: toSchema(response.schema, 'output') };
  if (response.eventStream) content['text/event-stream'] = { schema: toSchema(response.eventStream, 'output') };
  return Object.keys(content).length ? { content } : {};
}

/** The headers of one declared response: its own, the rate-limit window's, and the idempotent replay marker. */
function headersOf(route: RouteSpec<any, any, any>, status: string, response: RouteResponse, toSchema: SchemaConverter) {
  const declared = Object.fromEntries(
    Object.entries(response.headers ?? {}).map(([name, header]) => [
      name,
      { description: header.description, schema: header.schema ? toSchema(header.schema, 'output') : { type: 'string' } },
    ]),
  );
  const headers = {
    ...declared,
    ...(isIdempotent(route) && isSuccess(status) && { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }),
    ...(route.auth !== 'none' && WINDOW_HEADERS),
  };
  return Object.keys(headers).length ? { headers } : {};
}

/** The error answers every route of its kind can give, unless the route declares them itself. */
function addCommonErrors(route: RouteSpec<any, any, any>, responses: Record<string, unknown>, toSchema: SchemaConverter) {
  const errorBody = route.errorBody
    ? { 'application/json': { schema: toSchema(route.errorBody, 'output') } }
    : { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  const error = (description: string, headers?: Record<string, unknown>) => ({
    description,
    content: errorBody,
    ...(headers && { headers }),
  });
  if (route.body || route.rawBody || route.documentedBody || route.params || route.query || route.documentedHeaders)
    responses['400'] ??= error('The request is not valid');
  if (route.auth === 'none') {
    responses['403'] ??= error('Remote access is disabled (Hangar:Api:AllowRemoteAccess) and the caller is not on loopback');
  } else {
    responses['401'] ??= error('No credential, or an invalid one', { 'WWW-Authenticate': WWW_AUTHENTICATE });
    responses['403'] ??= error(
      `The credential lacks the ${route.auth.role} role or the ${route.auth.scope} scope, the tenant is disabled, or remote access is disabled`,
    );
    responses['429'] ??= error('Over the rate limit (RateLimit:Enabled): errorType rate_limited, with Retry-After', RATE_LIMIT_HEADERS);
  }
  responses['500'] ??= error('Unexpected error (no internals are shown; quote the traceId)');
}

function operationOf(route: RouteSpec<any, any, any>, toSchema: SchemaConverter) {
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries<RouteResponse>(route.responses)) {
    responses[status] = {
      description: response.description,
      ...headersOf(route, status, response, toSchema),
      ...contentOf(response, toSchema),
    };
  }
  addCommonErrors(route, responses, toSchema);
  const operation: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: [route.tag],
    parameters: [
      ...parametersOf(toSchema, route.params, 'path'),
      ...parametersOf(toSchema, route.query, 'query'),
      ...parametersOf(toSchema, route.documentedHeaders, 'header'),
      ...(isIdempotent(route) ? [IDEMPOTENCY_KEY] : []),
    ],
    responses,
    ...(route.auth === 'none' ? { security: [] } : { 'x-hangar-role': route.auth.role, 'x-hangar-scope': route.auth.scope }),
  };
  if (route.body) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: toSchema(route.body as z.ZodType, 'input') } } };
  } else if (route.documentedBody) {
    const { contentType, schema, json } = route.documentedBody;
    operation.requestBody = {
      required: true,
      content: {
        [contentType]: { schema },
        ...(json && { 'application/json': { schema: toSchema(json, 'input') } }),
      },
    };
  }
  return operation;
}

/** OpenAPI 3.1 document of every route the gateway serves, generated from the route specs. */
export function buildOpenApiDocument(routes: RouteSpec<any, any, any>[], options: { prefix: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, JsonSchema> = {};
  const toSchema = createSchemaConverter(components);
  const problem = toSchema(ProblemSchema, 'output');
  for (const route of routes) (paths[servedPath(route, options.prefix)] ??= {})[route.method] = operationOf(route, toSchema);
  const usedTags = new Set(routes.map((route) => route.tag));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hangar API',
      version: options.version,
      description: 'Hangar agent control plane, HTTP API v1. Errors are RFC 9457 problem+json.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    tags: Object.entries(API_TAGS)
      .filter(([name]) => usedTags.has(name as keyof typeof API_TAGS))
      .map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The static Hangar:Api:AuthToken, an API key or a JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (hgk_…)' },
      },
      schemas: { ...components, Problem: components.Problem ?? problem },
    },
    paths,
  };
}

const built = new WeakMap<RouteSpec<any, any, any>[], Map<string, ReturnType<typeof buildOpenApiDocument>>>();

/**
 * The document of a route list, built once per prefix and version: building it converts every zod
 * schema (tens of milliseconds of CPU that would hold every other request up).
 */
export function openApiDocumentOf(routes: RouteSpec<any, any, any>[], options: { prefix: string; version: string }) {
  const documents = built.get(routes) ?? new Map<string, ReturnType<typeof buildOpenApiDocument>>();
  built.set(routes, documents);
  const key = `${options.prefix}\u0000${options.version}`;
  let document = documents.get(key);
  if (!document) documents.set(key, (document = buildOpenApiDocument(routes, options)));
  return document;
}

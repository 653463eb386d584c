import { z } from 'zod';
import { isBelowPrefix, type RouteSpec } from './route.js';
import { ProblemSchema } from '../api.schemas.js';

type JsonSchema = Record<string, unknown>;

/**
 * Zod puts schemas that carry an id under `$defs` with `#/$defs/...` refs; in an OpenAPI document
 * they belong under `components.schemas`, so they are hoisted there and the refs rewritten.
 */
function createSchemaConverter(components: Record<string, JsonSchema>) {
  const rewriteRefs = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewriteRefs);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' ? value.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(value),
      ]),
    );
  };
  return (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = generated as JsonSchema & { $defs?: Record<string, JsonSchema> };
    for (const [id, definition] of Object.entries($defs ?? {})) {
      // Input and output shapes of one schema differ (defaults); keep both under distinct names.
      const name =
        io === 'input' && components[id] && JSON.stringify(components[id]) !== JSON.stringify(rewriteRefs(definition)) ? `${id}Input` : id;
      components[name] = rewriteRefs(definition) as JsonSchema;
    }
    return rewriteRefs(rest) as JsonSchema;
  };
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Replays the first response for the same request with Idempotent-Replayed: true for a day; 422 idempotency_key_reuse for another request, 409 idempotency_in_progress while the first executes',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** Path or query parameters from a zod object schema. */
function parametersOf(toSchema: ReturnType<typeof createSchemaConverter>, schema: z.ZodType | undefined, location: 'path' | 'query') {
  if (!schema) return [];
  const json = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    description: property.description,
    schema: property,
  }));
}

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** Sent on every authenticated answer while RateLimit:Enabled (API.md "Rate limiting"). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per window (RateLimit:PermitLimit)', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window ends', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait (429 only)', schema: { type: 'integer' } },
};

/** OpenAPI 3.1 document of every route the gateway serves, generated from the route specs. */
export function buildOpenApiDocument(routes: RouteSpec<any, any, any>[], options: { prefix: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, JsonSchema> = {};
  const toSchema = createSchemaConverter(components);
  const problem = toSchema(ProblemSchema, 'output');
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    const { 'Retry-After': _retryAfter, ...windowHeaders } = RATE_LIMIT_HEADERS;
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema && {
          content: { [response.contentType ?? 'application/json']: { schema: toSchema(response.schema, 'output') } },
        }),
        ...(route.auth !== 'none' && { headers: windowHeaders }),
      };
    }
    if (route.body || route.rawBody || route.documentedBody || route.params || route.query)
      responses['400'] ??= problemResponse('The request is not valid');
    if (route.auth !== 'none') {
      responses['401'] ??= problemResponse('No credential, or an invalid one');
      responses['403'] ??= problemResponse(
        `The credential lacks the ${route.auth.role} role or the ${route.auth.scope} scope, or remote access is disabled`,
      );
      responses['429'] ??= {
        ...problemResponse('Over the rate limit (RateLimit:Enabled): errorType rate_limited, with Retry-After'),
        headers: RATE_LIMIT_HEADERS,
      };
    }
    responses['500'] ??= problemResponse('Unexpected error (no internals are shown; quote the traceId)');

    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters: [
        ...parametersOf(toSchema, route.params, 'path'),
        ...parametersOf(toSchema, route.query, 'query'),
        ...(route.method === 'post' && (route.body || route.rawBody) ? [IDEMPOTENCY_KEY] : []),
      ],
      responses,
      ...(route.auth === 'none' ? { security: [] } : { 'x-hangar-role': route.auth.role, 'x-hangar-scope': route.auth.scope }),
    };
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: toSchema(route.body, 'input') } } };
    } else if (route.documentedBody) {
      operation.requestBody = { required: true, content: { [route.documentedBody.contentType]: { schema: route.documentedBody.schema } } };
    }
    const fullPath = isBelowPrefix(route.path) ? `${options.prefix}${route.path}` : route.path;
    (paths[fullPath] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hangar API',
      version: options.version,
      description: 'Hangar agent control plane, HTTP API v1. Errors are RFC 9457 problem+json.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The static Hangar:Api:AuthToken, an API key or a JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: { ...components, Problem: components.Problem ?? problem },
    },
    paths,
  };
}

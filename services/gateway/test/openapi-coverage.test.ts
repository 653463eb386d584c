import { createLogger, createProcessMetrics, loadConfig } from '@hangar/platform';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { createGatewayApp, gatewayRoutes } from '../src/gateway.app.js';
import type { GatewayContext } from '../src/gateway.context.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';
import { defineRoute } from '../src/http/route.js';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every method + path express answers, read from its router stack (nested routers included). */
function answeredRoutes(stack: Layer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) return Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${layer.route!.path}`);
    return layer.handle?.stack ? answeredRoutes(layer.handle.stack) : [];
  });
}

// The document is the fuzz's map (issue 9): a route mounted past it would go unfuzzed and undocumented.
it('the OpenAPI document lists every route the gateway answers, and nothing it does not', () => {
  const config = loadConfig({ env: {}, overrides: {} });
  const context = {
    config,
    logger: createLogger({ name: 'openapi-coverage', level: 'silent' }),
    metrics: createProcessMetrics('openapi-coverage'),
  } as unknown as GatewayContext;
  const app = createGatewayApp(context) as unknown as { router: { stack: Layer[] } };
  const answered = answeredRoutes(app.router.stack).sort();
  const document = buildOpenApiDocument(gatewayRoutes(), { prefix: '', version: 'test' });
  const documented = Object.entries(document.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`))
    .sort();
  expect(answered.length).toBeGreaterThan(30);
  expect(answered).toEqual(documented);
});

it('documents the run streams as text/event-stream frames, with the headers that steer and describe them', () => {
  const document = buildOpenApiDocument(gatewayRoutes(), { prefix: '/hangar', version: 'test' }) as any;
  const run = document.paths['/hangar/api/agents/{name}/run'].post;
  expect(Object.keys(run.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
  expect(run.responses['200'].content['text/event-stream'].schema).toEqual({ $ref: '#/components/schemas/RunStreamFrame' });
  const frames = document.components.schemas.RunStreamFrame.oneOf.map(
    (frame: { $ref: string }) => document.components.schemas[frame.$ref.split('/').pop()!].properties.event.const,
  );
  expect(frames).toEqual(['run', 'update', 'approvals', 'done', 'error']);
  expect(run.parameters.map((parameter: { name: string; in: string }) => `${parameter.in} ${parameter.name}`)).toEqual([
    'path name',
    'query protocol',
    'header Prefer',
    'header Idempotency-Key',
  ]);
  expect(Object.keys(run.responses['202'].headers)).toEqual(
    expect.arrayContaining(['Location', 'Preference-Applied', 'Idempotent-Replayed']),
  );

  const events = document.paths['/hangar/api/runs/{runId}/events'].get;
  expect(events.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(['runId', 'Last-Event-ID']);
  const eventFrames = document.components.schemas.RunEventFrame.oneOf.map(
    (frame: { $ref: string }) => document.components.schemas[frame.$ref.split('/').pop()!],
  );
  expect(eventFrames.map((frame: any) => frame.properties.event.const)).toContain('run.completed');
  expect(eventFrames.every((frame: any) => frame.required.includes('id'))).toBe(true);
});

it('documents a route outside /api/ below the prefix, authenticated, with the error body it declares', () => {
  const compatibilityRoute = defineRoute({
    method: 'get',
    path: '/v1/models',
    operationId: 'listCompatibleModels',
    summary: 'List models',
    description: 'A route shaped like the OpenAI-compatible ones.',
    tag: 'Agents',
    auth: { role: 'Reader', scope: 'RunsRead' },
    errorBody: z.object({ error: z.object({ message: z.string(), type: z.string() }) }),
    responses: { 200: { description: 'Models', schema: z.object({ data: z.array(z.unknown()) }) } },
    async handler() {
      return { status: 200, body: { data: [] } };
    },
  });
  const document = buildOpenApiDocument([compatibilityRoute], { prefix: '/hangar', version: 'test' }) as any;
  const operation = document.paths['/hangar/v1/models'].get;
  expect(operation.security).toBeUndefined(); // the document's: Authorization: Bearer, or X-API-Key
  expect(document.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
  expect(Object.keys(operation.responses['401'].content)).toEqual(['application/json']);
  expect(operation.responses['401'].content['application/json'].schema.properties).toHaveProperty('error');
});

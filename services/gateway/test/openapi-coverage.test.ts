import { createLogger, loadConfig } from '@hangar/platform';
import { expect, it } from 'vitest';
import { createGatewayApp, gatewayRoutes } from '../src/gateway.app.js';
import type { GatewayContext } from '../src/gateway.context.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';

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
  const context = { config, logger: createLogger({ name: 'openapi-coverage', level: 'silent' }) } as unknown as GatewayContext;
  const app = createGatewayApp(context) as unknown as { router: { stack: Layer[] } };
  const answered = answeredRoutes(app.router.stack).sort();
  const document = buildOpenApiDocument(gatewayRoutes(), { prefix: '', version: 'test' });
  const documented = Object.entries(document.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`))
    .sort();
  expect(answered.length).toBeGreaterThan(30);
  expect(answered).toEqual(documented);
});

import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, type HangarUnderTest } from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The scope matrix for API keys (SPEC Authentication 4): a key holding the Admin role and a single
 * scope, against every authenticated route of the OpenAPI document: refused 403 exactly where the
 * route needs another scope, and never refused for its scope where its own scope is the one asked.
 */
let hangar: HangarUnderTest;
let document: { paths: Record<string, Record<string, { 'x-hangar-scope'?: string; operationId: string }>> };

beforeAll(async () => {
  hangar = await startHangar({ modules: allInOneModules() });
  document = (await hangar.request('GET', '/api/openapi.json')).body;
});

afterAll(async () => {
  await hangar?.stop();
});

it('allows each single-scope key exactly the routes of its scope', async () => {
  const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation['x-hangar-scope'])
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        scope: operation['x-hangar-scope']!,
        id: operation.operationId,
      })),
  );
  const scopes = [...new Set(routes.map((route) => route.scope))].sort();
  expect(scopes.length).toBeGreaterThan(5);
  const mismatches: string[] = [];
  for (const scope of scopes) {
    const created = await hangar.request('POST', '/api/api-keys', { body: { name: `only-${scope}`, role: 'Admin', scopes: [scope] } });
    expect(created.status, created.text).toBe(201);
    for (const route of routes) {
      // Path parameters name nothing that exists: a route the key may use answers 404 or 400, never 403.
      const path = route.path.replace(/\{\w+\}/g, 'matrix-none');
      const answer = await hangar.request(route.method, path, {
        token: created.body.key,
        ...(route.method === 'POST' || route.method === 'PUT' ? { body: {} } : {}),
      });
      // A /v1 route answers in OpenAI's error body.
      const reason: string | undefined = answer.body?.detail ?? answer.body?.error?.message;
      const refused = answer.status === 403 && reason?.includes('scope');
      if (refused !== (route.scope !== scope)) mismatches.push(`${scope} key → ${route.method} ${route.path}: ${answer.status}`);
    }
  }
  expect(mismatches).toEqual([]);
});

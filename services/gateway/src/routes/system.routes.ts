import { z } from 'zod';
import { MetaSchema } from '../api.schemas.js';
import { ROLES, roleIncludes, type Role } from '@hangar/platform';
import type { Scope } from '../http/auth.js';
import { openApiDocumentOf } from '../http/openapi.js';
import { defineRoute, type RouteSpec } from '../http/route.js';

/**
 * The scopes each role can use on `routes` (those of every route whose required role it includes):
 * what /api/meta publishes, and what an API key created without scopes holds.
 */
export function roleAuthorizations(routes: RouteSpec<any, any, any>[]): Record<Role, Scope[]> {
  return Object.fromEntries(
    ROLES.map((role) => {
      const scopes = new Set<Scope>();
      for (const route of routes) if (route.auth !== 'none' && roleIncludes(role, route.auth.role)) scopes.add(route.auth.scope);
      return [role, [...scopes].sort()];
    }),
  ) as Record<Role, Scope[]>;
}

/** Meta, the OpenAPI document and health probes; they describe the full route list they are given. */
export function systemRoutes(allRoutes: () => RouteSpec<any, any, any>[]) {
  return [
    defineRoute({
      method: 'get',
      path: '/api/meta',
      operationId: 'getMeta',
      summary: 'Describe the service',
      description:
        'Returns the service version, the authentication methods configured, the store in use for each kind of data, and the scopes each role can use. Needs no credential.',
      tag: 'Meta',
      auth: 'none',
      responses: { 200: { description: 'Meta', schema: MetaSchema } },
      async handler(_input, context) {
        const { sql, events, cache } = context.stores;
        return {
          status: 200,
          body: {
            service: 'hangar',
            version: context.version,
            apiVersion: 'v1',
            authentication: context.authenticator.methods(),
            stores: { definitions: sql, runs: sql, sessions: sql, attachments: sql, events, cache },
            roles: roleAuthorizations(allRoutes()),
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'Get this OpenAPI document',
      description: 'Returns this OpenAPI 3.1 document, generated from the routes the gateway serves. Needs no credential.',
      tag: 'Meta',
      auth: 'none',
      responses: { 200: { description: 'OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
      async handler(_input, context) {
        return {
          status: 200,
          body: openApiDocumentOf(allRoutes(), { prefix: context.config.Hangar.Api.Prefix, version: context.version }),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/healthz',
      outsidePrefix: true,
      operationId: 'liveness',
      summary: 'Liveness probe',
      description:
        'Answers 200 while the gateway process runs. Needs no credential and is served at /healthz whatever Hangar:Api:Prefix is.',
      tag: 'Meta',
      auth: 'none',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      async handler() {
        return { status: 200, body: { status: 'ok' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      outsidePrefix: true,
      operationId: 'readiness',
      summary: 'Readiness probe',
      description:
        'Answers 200 while this gateway can take requests, and 503 `draining` from the moment a drain starts (Drain:Enabled, SIGTERM). It does not ask the backing services: one that is down makes its own routes answer 503 `service_unavailable`, not every gateway unready (GET /api/diagnostics reports each one). Needs no credential and is served at /readyz whatever Hangar:Api:Prefix is.',
      tag: 'Meta',
      auth: 'none',
      responses: {
        200: { description: 'Ready', schema: z.object({ status: z.literal('ok') }) },
        503: { description: 'This instance is draining', schema: z.object({ status: z.literal('draining') }) },
      },
      async handler(_input, context) {
        return context.draining() ? { status: 503, body: { status: 'draining' } } : { status: 200, body: { status: 'ok' } };
      },
    }),
  ];
}

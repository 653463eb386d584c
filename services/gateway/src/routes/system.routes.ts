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
        'Answers 200 when every backing service answers its gRPC health check, 503 naming the ones that do not, and 503 `draining` from the moment a drain starts (Drain:Enabled, SIGTERM). Needs no credential and is served at /readyz whatever Hangar:Api:Prefix is.',
      tag: 'Meta',
      auth: 'none',
      responses: {
        200: {
          description: 'Ready',
          schema: z.object({ status: z.enum(['ok', 'unavailable']), services: z.record(z.string(), z.string()) }),
        },
        503: {
          description: 'A backing service is not serving, or this instance is draining',
          schema: z.object({ status: z.enum(['unavailable', 'draining']), services: z.record(z.string(), z.string()) }),
        },
      },
      async handler(_input, context) {
        if (context.draining()) return { status: 503, body: { status: 'draining', services: {} } };
        const services = await context.checkHealth();
        // A drain that began while the services were asked turns them NOT_SERVING: it is named as what it is.
        if (context.draining()) return { status: 503, body: { status: 'draining', services: {} } };
        const ready = Object.values(services).every((status) => status === 'SERVING');
        return { status: ready ? 200 : 503, body: { status: ready ? 'ok' : 'unavailable', services } };
      },
    }),
  ];
}

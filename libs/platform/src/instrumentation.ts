import { registerInstrumentations, type Instrumentation } from '@opentelemetry/instrumentation';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

/**
 * Client spans for PostgreSQL (pg), Redis (node-redis) and outbound `fetch` (undici: model
 * providers, webhooks, tool servers). Imported first by every service's main.ts: a library is
 * patched when it loads, so this must run before anything imports it. Each client span needs a
 * parent (a request, a run, a consumer), so background loops (pollers, the outbox relay) make none.
 * Spans go to the tracer provider `startProcess` hands them once `initTelemetry` has made it.
 */
export const clientInstrumentations: Instrumentation[] = [
  new PgInstrumentation({ requireParentSpan: true }),
  new RedisInstrumentation({ requireParentSpan: true }),
  new UndiciInstrumentation({ requireParentforSpans: true }),
];

registerInstrumentations({ instrumentations: clientInstrumentations });

/** Where `startProcess` finds them (to hand them its tracer and meter providers) without importing this module itself. */
(globalThis as Record<symbol, unknown>)[Symbol.for('hangar.clientInstrumentations')] = clientInstrumentations;

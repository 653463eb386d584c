import { context, SpanKind, trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { currentTraceId, extractContext, initTelemetry, inSpan, injectContext, shutdownTelemetry } from '../src/index.js';

/** Without an OTLP endpoint spans are not recorded, yet trace ids still flow (logs, problem bodies, calls). */
describe('telemetry without an exporter', () => {
  initTelemetry({ serviceName: 'telemetry-test' });
  afterAll(() => shutdownTelemetry());

  it('gives each span a trace id without recording it, and continues a caller’s trace', async () => {
    const fresh = await inSpan('fresh', { kind: SpanKind.SERVER }, async (span) => ({
      recording: span.isRecording(),
      traceId: currentTraceId(),
    }));
    expect(fresh.recording).toBe(false);
    expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/);

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = extractContext({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    const continued = await inSpan('continued', { kind: SpanKind.SERVER, parent }, async () => ({
      traceId: currentTraceId(),
      outgoing: injectContext({}).traceparent,
    }));
    expect(continued.traceId).toBe(traceId);
    expect(continued.outgoing).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-0[01]$`));
    expect(trace.getSpan(context.active())).toBeUndefined();
  });
});

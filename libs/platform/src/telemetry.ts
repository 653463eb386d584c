import { context, propagation, trace, type Context, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

let provider: NodeTracerProvider | undefined;

/**
 * Installs the process-wide tracer (once): AsyncLocalStorage context and W3C `traceparent`
 * propagation. Spans are recorded and exported over OTLP/HTTP only when an endpoint is configured;
 * without one, trace ids still flow through HTTP → gRPC and into logs and problem bodies.
 */
export function initTelemetry(options: { serviceName: string; otlpEndpoint?: string | null }): void {
  if (provider) return;
  const spanProcessors: SpanProcessor[] = options.otlpEndpoint
    ? [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.otlpEndpoint }))]
    : [];
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors,
    // Nothing to export to: spans are not recorded (no attributes, timings, events kept per call),
    // yet each still carries a trace id, so ids flow through calls, logs and problem bodies.
    ...(!options.otlpEndpoint && { sampler: new AlwaysOffSampler() }),
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
}

export async function shutdownTelemetry(): Promise<void> {
  await provider?.shutdown();
}

export const tracer = () => trace.getTracer('hangar');

/** The active trace id, or undefined outside a span. */
export function currentTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

export function currentSpanIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/** Copies the active context into a carrier (HTTP headers or gRPC metadata entries). */
export function injectContext(carrier: Record<string, string>): Record<string, string> {
  propagation.inject(context.active(), carrier);
  return carrier;
}

export function extractContext(carrier: Record<string, string | undefined>): Context {
  return propagation.extract(context.active(), carrier);
}

/** Runs `work` inside a new span that ends when it settles, recording a thrown error. */
export async function inSpan<T>(
  name: string,
  options: { kind: SpanKind; parent?: Context; attributes?: Record<string, string | number> },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

export { SpanKind };

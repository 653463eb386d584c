import { randomUUID } from 'node:crypto';
import { context, propagation, ROOT_CONTEXT, trace, type Context, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, hostDetector, processDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SamplingDecision,
  type ReadableSpan,
  type Sampler,
  type Span as SdkSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { HANGAR_VERSION } from './version.js';

let provider: NodeTracerProvider | undefined;

/** The attribute that makes a span the root of a run's own spans (the run executor's run span). */
export const RUN_ID_ATTRIBUTE = 'hangar.run.id';

/**
 * Records every run span (and, through their parent, the spans under it) even when nothing else
 * is recorded, so a run's trace can be kept; the rest follows `others`.
 */
class RunSpanSampler implements Sampler {
  constructor(private readonly others: Sampler) {}
  shouldSample(...args: Parameters<Sampler['shouldSample']>) {
    if (args[4]?.[RUN_ID_ATTRIBUTE] !== undefined) return { decision: SamplingDecision.RECORD_AND_SAMPLED };
    return this.others.shouldSample(...args);
  }
  toString() {
    return `RunSpanSampler{${this.others.toString()}}`;
  }
}

/** What the process's span processor hands spans to: a module that keeps them (the run executor's run traces). */
export interface SpanSink {
  onStart(span: SdkSpan, parentContext: Context): void;
  onEnd(span: ReadableSpan): void;
}

const sinks = new Set<SpanSink>();

/** Hands every recorded span to the registered sinks (the provider takes its processors only when made). */
const sinkProcessor: SpanProcessor = {
  onStart: (span, parentContext) => sinks.forEach((sink) => sink.onStart(span, parentContext)),
  onEnd: (span) => sinks.forEach((sink) => sink.onEnd(span)),
  forceFlush: async () => {},
  shutdown: async () => {},
};

let sinksInstalled = false;

/** Whether this process hands run spans to sinks (the first start's `recordRunSpans`: one tracer per process). */
export const runSpansRecorded = () => sinksInstalled;

/** Registers a sink for recorded spans; the returned function removes it. */
export function addSpanSink(sink: SpanSink): () => void {
  sinks.add(sink);
  return () => sinks.delete(sink);
}

/**
 * Starts OpenTelemetry's Node tracer provider in this process (once), as the Node SDK would start
 * it: AsyncLocalStorage context, W3C `traceparent` propagation, resource attributes per service
 * (and `OTEL_RESOURCE_ATTRIBUTES`, the process and the host). Not the `NodeSDK` wrapper itself: its
 * module loads every exporter and propagator it can be configured with, 0.7 s of a service's 2 s
 * start, for nothing Hangar uses (docs/decisions.md).
 * Spans are recorded and exported over OTLP/HTTP only when an endpoint is configured; without one,
 * trace ids still flow through HTTP → gRPC → the event log and into logs and problem bodies. With
 * `recordRunSpans`, run spans and the spans under them are recorded whatever else is, for the run
 * traces the run executor keeps (`Observability:*`). Metrics stay with each process's meter
 * provider (`createProcessMetrics`); client libraries are instrumented by `instrumentation.ts`.
 * Returns the provider (the one started before, on a later call).
 */
export function initTelemetry(options: {
  serviceName: string;
  otlpEndpoint?: string | null;
  recordRunSpans?: boolean;
}): NodeTracerProvider {
  if (provider) return provider;
  sinksInstalled = options.recordRunSpans === true;
  // Nothing to export to: spans are not recorded (no attributes, timings, events kept per call),
  // yet each still carries a trace id, so ids flow through calls, logs and problem bodies.
  const others = new ParentBasedSampler({ root: options.otlpEndpoint ? new AlwaysOnSampler() : new AlwaysOffSampler() });
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      'service.namespace': 'hangar',
      'service.version': HANGAR_VERSION,
      'service.instance.id': randomUUID(),
    }).merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] })),
    // Always there: the sinks (the run executor's run traces) come and go after the start.
    spanProcessors: [
      ...(options.otlpEndpoint ? [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.otlpEndpoint }))] : []),
      sinkProcessor,
    ],
    sampler: options.recordRunSpans ? new RunSpanSampler(others) : others,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return provider;
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

/** Copies a context (the active one by default) into a carrier (HTTP headers, gRPC metadata, a message). */
export function injectContext(carrier: Record<string, string>, from: Context = context.active()): Record<string, string> {
  propagation.inject(from, carrier);
  return carrier;
}

/** The W3C `traceparent` of a context's span (for a message that leaves the process), or undefined. */
export const traceparentOf = (from: Context): string | undefined => injectContext({}, from).traceparent;

/** The context a W3C `traceparent` names (a message's), or the root context without one: work done in it joins that trace. */
export const contextOfTraceparent = (traceparent: string | null | undefined): Context =>
  traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;

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

type ConsumedMessage = { topic: string; group: string; traceparent?: string | null; attributes?: Record<string, string | number> };

const consumerSpanOf = (message: ConsumedMessage) =>
  tracer().startSpan(
    `process ${message.topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.operation.type': 'process',
        'messaging.destination.name': message.topic,
        'messaging.consumer.group.name': message.group,
        ...message.attributes,
      },
    },
    contextOfTraceparent(message.traceparent),
  );

/**
 * Handles a message from the event log in a CONSUMER span under the trace context it carries (its
 * W3C `traceparent`), so what a consumer does about a run's event joins the run's trace.
 */
export function inConsumerSpan<T>(message: ConsumedMessage, work: () => Promise<T>): Promise<T> {
  return inConsumerSpans([message], work);
}

/**
 * Handles several messages with one piece of work (a batch written in one statement): each message
 * gets its own CONSUMER span under its own trace, and they all last as long as the shared work.
 */
export async function inConsumerSpans<T>(messages: ConsumedMessage[], work: () => Promise<T>): Promise<T> {
  const spans = messages.map(consumerSpanOf);
  try {
    // One message's trace holds the work's own spans (a statement's); with several, none does.
    return await (spans.length === 1 ? context.with(trace.setSpan(context.active(), spans[0]), work) : work());
  } catch (error) {
    for (const span of spans) span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    for (const span of spans) span.end();
  }
}

export { SpanKind };

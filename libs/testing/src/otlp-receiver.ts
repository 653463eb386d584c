import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, with its attributes (and its resource's) flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface ReceivedMetric {
  name: string;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** `…/v1/traces`, for `Telemetry:OtlpEndpoint`. */
  tracesUrl: string;
  /** `…/v1/metrics`, for `Telemetry:OtlpMetricsEndpoint`. */
  metricsUrl: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  close(): Promise<void>;
}

type KeyValue = { key: string; value: Record<string, unknown> };
const flatten = (entries: KeyValue[] = []) => Object.fromEntries(entries.map((entry) => [entry.key, Object.values(entry.value)[0]]));

/** A collector on loopback that keeps every span and metric exported to it as OTLP/HTTP JSON. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const { resource, scopeSpans = [] } of body.resourceSpans ?? [])
        for (const scope of scopeSpans)
          for (const span of scope.spans ?? [])
            spans.push({ ...span, attributes: flatten(span.attributes), resource: flatten(resource?.attributes) });
      for (const { resource, scopeMetrics = [] } of body.resourceMetrics ?? [])
        for (const scope of scopeMetrics)
          for (const metric of scope.metrics ?? []) metrics.push({ name: metric.name, resource: flatten(resource?.attributes) });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    tracesUrl: `${base}/v1/traces`,
    metricsUrl: `${base}/v1/metrics`,
    spans,
    metrics,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

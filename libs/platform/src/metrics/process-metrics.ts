import { createHash, timingSafeEqual } from 'node:crypto';
import type { Meter } from '@opentelemetry/api';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { MeterProvider, MetricReader, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';

/** The Content-Type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Collects only when scraped: nothing is pushed anywhere, so an unscraped process keeps just its aggregates. */
class ScrapeReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The OpenTelemetry metrics of one process: every module of it records through `meter`; `/metrics` reads `scrape()`. */
export interface ProcessMetrics {
  meter: Meter;
  /** For instruments made elsewhere (client libraries' instrumentations) that should show on `/metrics` too. */
  meterProvider: MeterProvider;
  /** Every instrument of the process in the Prometheus text format. */
  scrape(): Promise<string>;
  shutdown(): Promise<void>;
}

/** Pushes to an OTLP/HTTP collector as well as serving scrapes, when `otlp` is given (`Telemetry:OtlpMetricsEndpoint`). */
export function createProcessMetrics(serviceName: string, otlp?: { endpoint: string; intervalMs: number }): ProcessMetrics {
  const reader = new ScrapeReader();
  const readers: MetricReader[] = [reader];
  if (otlp)
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: otlp.endpoint }),
        exportIntervalMillis: otlp.intervalMs,
      }),
    );
  const resource = resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'hangar' });
  const provider = new MeterProvider({ resource, readers });
  // One scope ("hangar"): its name on every series would only add a label.
  const serializer = new PrometheusSerializer('', false, undefined, false, true);
  return {
    meter: provider.getMeter('hangar'),
    meterProvider: provider,
    async scrape() {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => provider.shutdown(),
  };
}

/** Bucket bounds (seconds) for durations from a fast HTTP answer to a long agent run. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Whether a scrape may read `/metrics`: always without `Hangar:Api:MetricsToken`, else only with
 * `Authorization: Bearer <token>` (constant-time compare).
 */
export function metricsScrapeAllowed(metricsToken: string | null, authorization: string | undefined): boolean {
  if (!metricsToken) return true;
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  return !!match && timingSafeEqual(digest(match[1]!.trim()), digest(metricsToken));
}

const digest = (value: string) => createHash('sha256').update(value).digest();

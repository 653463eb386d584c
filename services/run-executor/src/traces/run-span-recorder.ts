import { trace, type Context } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { RUN_ID_ATTRIBUTE, type HangarConfig, type Logger, type SpanSink } from '@hangar/platform';
import type { RunSpan, SpanRepository } from './span.repository.js';
import { RUN_STATUS_ATTRIBUTE, TENANT_ATTRIBUTE } from './run-tracing.js';

type Settings = Pick<HangarConfig, 'Observability'>;

interface RunBuffer {
  tenantId: string;
  spans: RunSpan[];
  dropped: number;
  /** Spans of the run still open; forgotten when the run span ends (a span the SDK never ends must not stay). */
  open: Set<string>;
}

/** A trace id's last 8 hex digits as a fraction in [0, 1): the same decision for every run of a trace. */
const traceFraction = (traceId: string) => parseInt(traceId.slice(-8), 16) / 2 ** 32;

/** The scope every OpenTelemetry client-library instrumentation (pg, Redis, undici) names its spans with. */
const CLIENT_INSTRUMENTATION_SCOPE = '@opentelemetry/instrumentation-';

const STATUS_NAMES = ['Unset', 'Ok', 'Error'] as const;
const iso = (time: ReadableSpan['startTime']) => new Date(hrTimeToMilliseconds(time)).toISOString();

function runSpanOf(span: ReadableSpan): RunSpan {
  return {
    spanId: span.spanContext().spanId,
    traceId: span.spanContext().traceId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    startTime: iso(span.startTime),
    endTime: iso(span.endTime),
    status: STATUS_NAMES[span.status.code] ?? 'Unset',
    attributes: { ...span.attributes },
  };
}

/**
 * Keeps each run's spans (Observability:PersistSpans): a span belongs to the run whose run span it
 * descends from in this process (a run this recorder's engine claimed); when the run span ends, its spans are written — every failed run
 * with `AlwaysPersistFailures`, any other with probability `SuccessSampleRatio` — at most
 * `MaxSpansPerRun` of them (the first ones; the run span always). Writing never holds up the run.
 */
export function createRunSpanRecorder(deps: {
  spans: SpanRepository;
  settings: Settings;
  logger: Logger;
  /** Replaces the trace id's fraction (tests). */
  random?: () => number;
}) {
  const { SuccessSampleRatio, AlwaysPersistFailures, MaxSpansPerRun } = deps.settings.Observability;
  const random = deps.random;
  /** Runs this recorder's engine executes; another engine in the same process keeps its own. */
  const claimed = new Set<string>();
  const runOfSpan = new Map<string, string>();
  const buffers = new Map<string, RunBuffer>();
  const writes = new Set<Promise<void>>();

  // Sampled by trace, not by run: a kept parent's child runs (same trace) are kept with it.
  const kept = (failed: boolean, traceId: string) =>
    (failed && AlwaysPersistFailures) || (random?.() ?? traceFraction(traceId)) < SuccessSampleRatio;

  function persist(runId: string, buffer: RunBuffer) {
    const write = deps.spans
      .insert(buffer.tenantId, runId, buffer.spans)
      .catch((error) => deps.logger.warn({ err: error, runId }, 'run spans not kept'))
      .finally(() => writes.delete(write));
    writes.add(write);
  }

  const sink: SpanSink = {
    onStart(span, parentContext: Context) {
      const spanId = span.spanContext().spanId;
      const ownRun = span.attributes[RUN_ID_ATTRIBUTE];
      if (typeof ownRun === 'string') {
        if (!claimed.delete(ownRun)) return;
        buffers.set(ownRun, { tenantId: String(span.attributes[TENANT_ATTRIBUTE] ?? ''), spans: [], dropped: 0, open: new Set([spanId]) });
        runOfSpan.set(spanId, ownRun);
        return;
      }
      // A client library's span (a SQL statement, a Redis command, an HTTP request) goes to OTLP
      // only: a run's trace shows its work, not its plumbing, within MaxSpansPerRun.
      if (span.instrumentationScope.name.startsWith(CLIENT_INSTRUMENTATION_SCOPE)) return;
      const parentId = trace.getSpanContext(parentContext)?.spanId;
      const runId = parentId && runOfSpan.get(parentId);
      if (!runId) return;
      runOfSpan.set(spanId, runId);
      buffers.get(runId)?.open.add(spanId);
    },
    onEnd(span) {
      const spanId = span.spanContext().spanId;
      const runId = runOfSpan.get(spanId);
      if (!runId) return;
      runOfSpan.delete(spanId);
      const buffer = buffers.get(runId);
      if (!buffer) return;
      buffer.open.delete(spanId);
      const isRunSpan = span.attributes[RUN_ID_ATTRIBUTE] === runId;
      if (isRunSpan || buffer.spans.length < MaxSpansPerRun - 1) buffer.spans.push(runSpanOf(span));
      else buffer.dropped += 1;
      if (!isRunSpan) return;
      buffers.delete(runId);
      for (const open of buffer.open) runOfSpan.delete(open);
      if (buffer.dropped) buffer.spans.at(-1)!.attributes['hangar.spans.dropped'] = buffer.dropped;
      if (kept(span.attributes[RUN_STATUS_ATTRIBUTE] === 'Failed', span.spanContext().traceId)) persist(runId, buffer);
    },
  };

  return {
    sink,
    /** Called before the run's span starts; `release` after it ended (a claim whose span never started must not stay). */
    claim: (runId: string) => void claimed.add(runId),
    release: (runId: string) => void claimed.delete(runId),
    /** Waits for the writes under way (a stopping module, a test). */
    async settled(): Promise<void> {
      await Promise.all([...writes]);
    },
  };
}

/** How an engine tells its recorder which runs are its own. */
export type RunSpanClaims = Pick<ReturnType<typeof createRunSpanRecorder>, 'claim' | 'release'>;

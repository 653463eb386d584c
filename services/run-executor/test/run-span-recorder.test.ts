import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { createLogger, RUN_ID_ATTRIBUTE } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { createRunSpanRecorder } from '../src/traces/run-span-recorder.js';
import { RUN_STATUS_ATTRIBUTE, TENANT_ATTRIBUTE } from '../src/traces/run-tracing.js';
import type { RunSpan, SpanRepository } from '../src/traces/span.repository.js';

/** Which spans of which run are kept, and when (Observability:SuccessSampleRatio, AlwaysPersistFailures, MaxSpansPerRun). */

function recorderWith(settings: { SuccessSampleRatio: number; AlwaysPersistFailures: boolean; MaxSpansPerRun: number }, random?: number) {
  const kept: Array<{ tenantId: string; runId: string; spans: RunSpan[] }> = [];
  const spans = strictFake<SpanRepository>('spans', {
    async insert(tenantId, runId, written) {
      kept.push({ tenantId, runId, spans: written });
    },
  });
  const recorder = createRunSpanRecorder({
    spans,
    // The recorder reads only these three keys.
    settings: { Observability: settings } as unknown as Parameters<typeof createRunSpanRecorder>[0]['settings'],
    logger: createLogger({ name: 'test', level: 'silent' }),
    random: random === undefined ? undefined : () => random,
  });
  const provider = new BasicTracerProvider({
    spanProcessors: [{ ...recorder.sink, forceFlush: async () => {}, shutdown: async () => {} }],
  });
  const tracer = provider.getTracer('test');

  /** A run span with `children` spans under it (one nested a level deeper), ended with `status`. */
  async function run(runId: string, status: string, children: number, claim = true) {
    if (claim) recorder.claim(runId);
    const runSpan = tracer.startSpan('invoke_agent a', { attributes: { [RUN_ID_ATTRIBUTE]: runId, [TENANT_ATTRIBUTE]: 't1' } });
    const runContext = trace.setSpan(context.active(), runSpan);
    for (let index = 0; index < children; index += 1) {
      const child = tracer.startSpan(`child ${index}`, {}, runContext);
      tracer.startSpan('grandchild', {}, trace.setSpan(runContext, child)).end();
      child.end();
    }
    runSpan.setAttribute(RUN_STATUS_ATTRIBUTE, status);
    runSpan.end();
    await recorder.settled();
  }
  return { kept, run, recorder, tracer, provider };
}

describe('run span recorder', () => {
  it('keeps every span under a kept run span, parent links intact, for the claiming engine only', async () => {
    const { kept, run } = recorderWith({ SuccessSampleRatio: 1, AlwaysPersistFailures: true, MaxSpansPerRun: 200 });
    await run('r1', 'Completed', 2);
    await run('r2', 'Completed', 2, false);
    expect(kept.map((write) => [write.tenantId, write.runId, write.spans.length])).toEqual([['t1', 'r1', 5]]);
    const byName = new Map(kept[0]!.spans.map((span) => [span.name, span]));
    expect(byName.get('child 0')!.parentSpanId).toBe(byName.get('invoke_agent a')!.spanId);
  });

  it('leaves out client-library spans (SQL, Redis, HTTP) under the run: they go to OTLP only', async () => {
    const { kept, recorder, tracer, provider } = recorderWith({ SuccessSampleRatio: 1, AlwaysPersistFailures: true, MaxSpansPerRun: 200 });
    recorder.claim('r1');
    const runSpan = tracer.startSpan('invoke_agent a', { attributes: { [RUN_ID_ATTRIBUTE]: 'r1', [TENANT_ATTRIBUTE]: 't1' } });
    const runContext = trace.setSpan(context.active(), runSpan);
    provider.getTracer('@opentelemetry/instrumentation-pg').startSpan('pg.query:INSERT', {}, runContext).end();
    tracer.startSpan('execute_tool t', {}, runContext).end();
    runSpan.end();
    await recorder.settled();
    expect(kept[0]!.spans.map((span) => span.name)).toEqual(['execute_tool t', 'invoke_agent a']);
  });

  it('keeps failures with AlwaysPersistFailures, successes by SuccessSampleRatio', async () => {
    const sampledOut = recorderWith({ SuccessSampleRatio: 0.4, AlwaysPersistFailures: true, MaxSpansPerRun: 200 }, 0.5);
    await sampledOut.run('ok', 'Completed', 1);
    await sampledOut.run('bad', 'Failed', 1);
    expect(sampledOut.kept.map((write) => write.runId)).toEqual(['bad']);

    const sampledIn = recorderWith({ SuccessSampleRatio: 0.6, AlwaysPersistFailures: false, MaxSpansPerRun: 200 }, 0.5);
    await sampledIn.run('ok', 'Completed', 1);
    expect(sampledIn.kept.map((write) => write.runId)).toEqual(['ok']);
    const neither = recorderWith({ SuccessSampleRatio: 0, AlwaysPersistFailures: false, MaxSpansPerRun: 200 }, 0.5);
    await neither.run('bad', 'Failed', 1);
    expect(neither.kept).toEqual([]);
  });

  it('keeps at most MaxSpansPerRun spans, the run span always, and counts the dropped ones on it', async () => {
    const { kept, run } = recorderWith({ SuccessSampleRatio: 1, AlwaysPersistFailures: true, MaxSpansPerRun: 3 });
    await run('r1', 'Completed', 3);
    const spans = kept[0]!.spans;
    expect(spans).toHaveLength(3);
    const runSpan = spans.find((span) => span.attributes[RUN_ID_ATTRIBUTE] === 'r1')!;
    expect(runSpan.attributes['hangar.spans.dropped']).toBe(4);
  });

  it('forgets a span that never ends once its run span ended, and samples every run of one trace alike', async () => {
    const { kept, recorder, tracer } = recorderWith({ SuccessSampleRatio: 0.5, AlwaysPersistFailures: false, MaxSpansPerRun: 200 });
    recorder.claim('parent');
    recorder.claim('child');
    const parent = tracer.startSpan('invoke_agent parent', { attributes: { [RUN_ID_ATTRIBUTE]: 'parent', [TENANT_ATTRIBUTE]: 't1' } });
    const parentContext = trace.setSpan(context.active(), parent);
    const abandoned = tracer.startSpan('never ends', {}, parentContext);
    const child = tracer.startSpan(
      'invoke_agent child',
      { attributes: { [RUN_ID_ATTRIBUTE]: 'child', [TENANT_ATTRIBUTE]: 't1' } },
      parentContext,
    );
    child.end();
    parent.end();
    // The abandoned span's late end belongs to no run any more.
    abandoned.end();
    await recorder.settled();
    const traceId = parent.spanContext().traceId;
    const keptByTrace = parseInt(traceId.slice(-8), 16) / 2 ** 32 < 0.5;
    expect(kept.map((write) => write.runId).sort()).toEqual(keptByTrace ? ['child', 'parent'] : []);
    expect(kept.flatMap((write) => write.spans.map((span) => span.name))).not.toContain('never ends');
  });
});

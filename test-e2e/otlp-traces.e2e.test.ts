import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { createKafkaEventLog, type EventLog, type LogRecord } from '@hangar/messaging';
import {
  dropSchemas,
  eventually,
  spawnAllInOne,
  startHangar,
  TEST_TOPOLOGY,
  startMockOpenAI,
  startOtlpReceiver,
  TEST_KAFKA_BROKERS,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  TEST_TOKEN,
  uniqueSchemaPrefix,
  type AllInOneProcess,
  type HangarUnderTest,
  type MockOpenAI,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Telemetry (issue 14 item 1): a local OTLP/HTTP receiver gets one trace per run, linked parent to
 * child from the gateway's request through the gRPC call to the run executor, the run, its model
 * call, and past the event log to governance's consumers of the run's events; a process started
 * through its main.ts adds client spans (pg, Redis, fetch), puts the run's trace context on its
 * Kafka records' headers and pushes its metrics over OTLP.
 */

let mock: MockOpenAI;
let receiver: OtlpReceiver;

beforeAll(async () => {
  mock = await startMockOpenAI();
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await mock?.close();
  await receiver?.close();
});

/** The run's spans at the receiver once its run span and `consumers` consumer spans arrived (spans leave in batches, about every 5 s). */
function runTrace(runId: string, consumers: number) {
  return eventually(
    async () => {
      const run = receiver.spans.find((span) => span.attributes['hangar.run.id'] === runId && span.name === 'invoke_agent traced');
      const spans = run ? receiver.spans.filter((span) => span.traceId === run.traceId) : [];
      const consumerSpans = spans.filter((span) => span.name === 'process hangar.run-events');
      if (!run || consumerSpans.length < consumers) return undefined;
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const parentOf = (span: ReceivedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
      const under = (span: ReceivedSpan, ancestor: ReceivedSpan) => {
        for (let parent = parentOf(span); parent; parent = parentOf(parent)) if (parent === ancestor) return true;
        return false;
      };
      return { run, spans, consumers: consumerSpans, parentOf, under };
    },
    'the run’s trace at the receiver',
    20_000,
  );
}

// One process's export: every span under one service.name, the consumers in the process that ran the
// run. The split shape is skipped here: its processes export apart (tracing.e2e follows one trace there).
describe.skipIf(TEST_TOPOLOGY === 'split')('in one process (startHangar)', () => {
  let hangar: HangarUnderTest;

  beforeAll(async () => {
    hangar = await startHangar({
      modules: allInOneModules(),
      overrides: { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } }, Telemetry: { OtlpEndpoint: receiver.tracesUrl } },
    });
    const created = await hangar.request('POST', '/api/agents', { body: { name: 'traced', model: { provider: 'mock', model: 'traced' } } });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await hangar?.stop();
  });

  it('exports one trace per run: gateway → gRPC → run → model call, and the run events’ consumers under the run', async () => {
    const result = await hangar.request('POST', '/api/agents/traced/run', {
      body: { message: 'hi' },
      headers: { 'idempotency-key': 'otlp-1' },
    });
    expect(result.status).toBe(200);
    const trace = await runTrace(result.body.runId as string, 2);

    const grpcCall = trace.parentOf(trace.run)!;
    expect(grpcCall.name).toBe('/hangar.v1.RunExecutorService/StartRun');
    const request = trace.parentOf(grpcCall)!;
    expect(request.name).toBe('POST /api/agents/traced/run');
    expect(trace.parentOf(request)).toBeUndefined();
    expect(request.resource['service.name']).toBe('hangar-test');

    const modelCall = trace.spans.find((span) => span.attributes['gen_ai.request.model'] === 'traced')!;
    expect(trace.under(modelCall, trace.run)).toBe(true);

    // Quotas and webhooks each consume the run's events, under the run's span.
    expect(new Set(trace.consumers.map((span) => span.attributes['messaging.consumer.group.name'])).size).toBe(2);
    for (const consumer of trace.consumers) expect(consumer.parentSpanId).toBe(trace.run.spanId);
  });
});

describe('a process started through main.ts, on PostgreSQL, Redis and Kafka', () => {
  const schemaPrefix = uniqueSchemaPrefix();
  const topicPrefix = `t_${randomBytes(5).toString('hex')}.`;
  let hangar: AllInOneProcess;
  let consumerLog: EventLog;
  const onKafka: LogRecord[] = [];

  beforeAll(async () => {
    hangar = await spawnAllInOne({
      env: {
        HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL,
        HANGAR__Stores__Postgres__SchemaName: schemaPrefix,
        HANGAR__Redis__ConnectionString: TEST_REDIS_URL,
        HANGAR__Redis__ChannelPrefix: `${topicPrefix}:`,
        HANGAR__Kafka__Brokers: TEST_KAFKA_BROKERS.join(','),
        HANGAR__Kafka__TopicPrefix: topicPrefix,
        HANGAR__Providers__mock__Kind: 'OpenAICompatible',
        HANGAR__Providers__mock__Endpoint: mock.url,
        HANGAR__Telemetry__OtlpEndpoint: receiver.tracesUrl,
        HANGAR__Telemetry__OtlpMetricsEndpoint: receiver.metricsUrl,
        HANGAR__Telemetry__MetricsExportInterval: '1s',
      },
    });
    consumerLog = await createKafkaEventLog({ brokers: TEST_KAFKA_BROKERS, clientId: 'hangar-otlp-test', prefix: topicPrefix });
    await consumerLog.subscribe('hangar.run-events', 'otlp-test', async (record) => void onKafka.push(record));
    const created = await call('POST', '/api/agents', { name: 'traced', model: { provider: 'mock', model: 'traced' } });
    expect(created.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await consumerLog?.close();
    await hangar?.stop();
    await dropSchemas(schemaPrefix);
  });

  // With an Idempotency-Key a run answers as one JSON document.
  const call = (method: string, path: string, body: unknown) =>
    fetch(`${hangar.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_TOKEN}`,
        'content-type': 'application/json',
        'idempotency-key': randomBytes(6).toString('hex'),
      },
      body: JSON.stringify(body),
    });

  it('adds pg, Redis and fetch client spans under the run, and the run’s trace context on its Kafka records', async () => {
    const response = await call('POST', '/api/agents/traced/run', { message: 'hi' });
    expect(response.status).toBe(200);
    const runId = ((await response.json()) as { runId: string }).runId;
    const trace = await runTrace(runId, 2);
    expect(trace.run.resource['service.name']).toBe('hangar-all-in-one');
    // gateway → gRPC → run, and governance's consumers, which read the run's events from Kafka here, under the run.
    expect(trace.parentOf(trace.run)?.name).toBe('/hangar.v1.RunExecutorService/StartRun');
    expect(trace.parentOf(trace.parentOf(trace.run)!)?.name).toBe('POST /api/agents/traced/run');
    for (const consumer of trace.consumers) expect(consumer.parentSpanId).toBe(trace.run.spanId);
    expect(trace.run.resource['service.version']).toBeTruthy();

    const underRun = trace.spans.filter((span) => trace.under(span, trace.run));
    const sql = underRun.filter((span) => (span.attributes['db.system.name'] ?? span.attributes['db.system']) === 'postgresql');
    expect(sql.length, underRun.map((span) => span.name).join(', ')).toBeGreaterThan(0);
    expect(underRun.some((span) => (span.attributes['db.system.name'] ?? span.attributes['db.system']) === 'redis')).toBe(true);
    const modelCall = trace.spans.find((span) => span.attributes['gen_ai.request.model'] === 'traced')!;
    const upstream = trace.spans.find((span) => String(span.attributes['url.full'] ?? '').startsWith(mock.url));
    expect(upstream, 'the fetch to the model provider').toBeDefined();
    expect(trace.under(upstream!, modelCall)).toBe(true);

    // A consumer that knows only Kafka headers joins the run's trace too.
    const records = await eventually(
      async () => {
        const ofRun = onKafka.filter((record) => JSON.parse(record.value).runId === runId);
        return ofRun.some((record) => JSON.parse(record.value).type === 'run.completed') ? ofRun : undefined;
      },
      'the run’s events on Kafka',
      20_000,
    );
    for (const record of records) expect(record.traceparent?.split('-')[1]).toBe(trace.run.traceId);
  });

  it('pushes its metrics over OTLP, with the client libraries’ own', async () => {
    await eventually(
      async () => {
        const names = new Set(
          receiver.metrics.filter((metric) => metric.resource['service.name'] === 'hangar-all-in-one').map((m) => m.name),
        );
        return names.has('hangar_runs_started_total') && [...names].some((name) => name.startsWith('db.client')) ? names : undefined;
      },
      'hangar and pg metrics at the receiver',
      20_000,
    );
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * Telemetry:OtlpEndpoint (issue 14 item 1, so far): a local OTLP/HTTP receiver gets one trace per
 * run, linked parent to child from the gateway's request through the gRPC call to the run
 * executor, the run, its model call, and past the event log to governance's consumers of the
 * run's events. (Database and Kafka client spans come with the auto-instrumentation still to do.)
 */

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

let receiver: Server;
let endpoint: string;
const received: ReceivedSpan[] = [];
let mock: MockOpenAI;
let hangar: HangarUnderTest;

const attributeValue = (value: Record<string, unknown>) => Object.values(value)[0];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resource of body.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            received.push({
              ...span,
              attributes: Object.fromEntries((span.attributes ?? []).map((entry: any) => [entry.key, attributeValue(entry.value)])),
            });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  mock = await startMockOpenAI();
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } }, Telemetry: { OtlpEndpoint: endpoint } },
  });
  expect(
    (await hangar.request('POST', '/api/agents', { body: { name: 'traced', model: { provider: 'mock', model: 'traced' } } })).status,
  ).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

it('exports one trace per run: gateway → gRPC → run → model call, and the run events’ consumers under the run', async () => {
  const result = await hangar.request('POST', '/api/agents/traced/run', {
    body: { message: 'hi' },
    headers: { 'idempotency-key': 'otlp-1' },
  });
  expect(result.status).toBe(200);
  const runId = result.body.runId as string;
  // Spans leave in batches (about every 5 s); the quota consumer's comes after the run's end.
  const trace = await eventually(
    async () => {
      const run = received.find((span) => span.attributes['hangar.run.id'] === runId && span.name === 'invoke_agent traced');
      const spans = run ? received.filter((span) => span.traceId === run.traceId) : [];
      const consumers = spans.filter((span) => span.name === 'process hangar.run-events');
      return run && consumers.length >= 2 ? { run, spans, consumers } : undefined;
    },
    'the run’s trace at the receiver',
    20_000,
  );
  const byId = new Map(trace.spans.map((span) => [span.spanId, span]));
  const parentOf = (span: ReceivedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);

  const grpcCall = parentOf(trace.run)!;
  expect(grpcCall.name).toBe('/hangar.v1.RunExecutorService/StartRun');
  const request = parentOf(grpcCall)!;
  expect(request.name).toBe('POST /api/agents/traced/run');
  expect(parentOf(request)).toBeUndefined();

  const modelCall = trace.spans.find((span) => span.attributes['gen_ai.request.model'] === 'traced')!;
  let ancestor = parentOf(modelCall);
  while (ancestor && ancestor !== trace.run) ancestor = parentOf(ancestor);
  expect(ancestor).toBe(trace.run);

  // Quotas and webhooks each consume the run's events, under the run's span.
  expect(new Set(trace.consumers.map((span) => span.attributes['messaging.consumer.group.name'])).size).toBe(2);
  for (const consumer of trace.consumers) expect(consumer.parentSpanId).toBe(trace.run.spanId);
});

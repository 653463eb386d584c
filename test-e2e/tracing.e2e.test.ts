import { createServer, type Server } from 'node:http';
import { allInOneModules } from '@hangar/all-in-one';
import { shutdownTelemetry } from '@hangar/platform';
import { eventually, freePort, startHangar, TEST_TOPOLOGY, type HangarUnderTest } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** One trace from the HTTP request through the gateway's gRPC client into the service, exported over OTLP. */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
let hangar: HangarUnderTest;
let collector: Server;
const exported: any[] = [];

beforeAll(async () => {
  const port = await freePort();
  collector = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      exported.push(JSON.parse(body));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(port, '127.0.0.1', resolve));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: { Telemetry: { OtlpEndpoint: `http://127.0.0.1:${port}/v1/traces` } },
  });
});

afterAll(async () => {
  await hangar?.stop();
  collector?.close();
});

describe('tracing', () => {
  it('continues the caller’s trace through gateway and service, and names it in problem bodies', async () => {
    const result = await hangar.request('GET', '/api/agents/no-such-agent', {
      headers: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
    });
    expect(result.status).toBe(404);
    expect(result.body.traceId).toBe(TRACE_ID);

    // In one process, shutting the SDK down flushes its batch to the collector; the split shape's
    // gateway and registry are processes of their own, which export on their batch schedule.
    if (TEST_TOPOLOGY === 'all-in-one') await shutdownTelemetry();
    const namesInTrace = () =>
      exported
        .flatMap((payload) => payload.resourceSpans.flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans)))
        .filter((span: any) => span.traceId === TRACE_ID)
        .map((span: any) => span.name as string);
    // The request's span, and the gRPC call's client span in the gateway and server span in the registry.
    const getAgent = '/hangar.v1.AgentRegistryService/GetAgent';
    const names = await eventually(
      async () => {
        const seen = namesInTrace();
        return seen.includes('GET /api/agents/no-such-agent') && seen.filter((name) => name === getAgent).length >= 2 ? seen : undefined;
      },
      'the request’s and both GetAgent spans at the collector',
      20_000,
    );
    expect(names.filter((name) => name === getAgent)).toHaveLength(2);
  });
});

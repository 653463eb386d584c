import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Run traces (API.md "Operations", SPEC Observability:*): a run's spans — its run span, the model
 * calls and tool calls under it, the child runs they start — kept per run and read at
 * GET /api/runs/{runId}/trace, sampled as the Observability keys say.
 */

let mock: MockOpenAI;
let everyRun: HangarUnderTest;
let failuresOnly: HangarUnderTest;

interface TraceSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  status: string;
  attributes: Record<string, any>;
}

async function runOnce(target: HangarUnderTest, agent: string, message: string): Promise<string> {
  const result = await target.request('POST', `/api/agents/${agent}/run`, {
    body: { message },
    headers: { 'idempotency-key': crypto.randomUUID() },
  });
  // A failed run is a problem answer that names the run.
  return result.body.runId;
}

const traceOf = (target: HangarUnderTest, runId: string) =>
  eventually(async () => {
    const trace = (await target.request('GET', `/api/runs/${runId}/trace`)).body as { traceId: string | null; spans: TraceSpan[] };
    return trace.spans.length ? trace : undefined;
  }, `the trace of run ${runId}`);

beforeAll(async () => {
  mock = await startMockOpenAI();
  const providers = { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } };
  everyRun = await startHangar({
    modules: allInOneModules(),
    overrides: { Providers: providers, Observability: { SuccessSampleRatio: 1 } },
  });
  failuresOnly = await startHangar({
    modules: allInOneModules(),
    overrides: { Providers: providers, Observability: { SuccessSampleRatio: 0 } },
  });
  for (const target of [everyRun, failuresOnly]) {
    for (const [name, model, extra] of [
      ['traced', 'traced', {}],
      ['clocked', 'clocked', { tools: ['clock'] }],
      ['broken', 'broken', {}],
      ['leaf', 'traced', {}],
      ['delegating', 'delegating', { agents: ['leaf'] }],
    ] as const) {
      const created = await target.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model }, ...extra } });
      expect(created.status, created.text).toBe(201);
    }
  }
  mock.script('traced', () => ({ text: 'traced answer', usage: { prompt: 9, completion: 2 } }));
  mock.script('broken', [{ status: 500 }]);
  mock.script('clocked', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'noon' }
      : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } },
  );
  mock.script('delegating', (request) => {
    if (request.messages.some((message) => message.role === 'tool')) return { text: 'relayed' };
    const tool = request.tools!.find((entry) => entry.function.name.startsWith('call_'))!;
    return { toolCall: { name: tool.function.name, args: { message: 'go' } } };
  });
});

afterAll(async () => {
  await everyRun?.stop();
  await failuresOnly?.stop();
  await mock?.close();
});

describe('a kept run trace', () => {
  it('holds the run span and its model call with GenAI attributes, linked parent to child, no prompt text', async () => {
    const runId = await runOnce(everyRun, 'traced', 'the canary-7731 question');
    const trace = await traceOf(everyRun, runId);
    const run = trace.spans.find((span) => span.name === 'invoke_agent traced')!;
    expect(run.parentSpanId === null || !trace.spans.some((span) => span.spanId === run.parentSpanId)).toBe(true);
    expect(run.attributes).toMatchObject({
      'hangar.run.id': runId,
      'hangar.run.status': 'Completed',
      'gen_ai.agent.name': 'traced',
      'hangar.agent.version': 1,
      'gen_ai.usage.input_tokens': 9,
    });
    const call = trace.spans.find((span) => span.attributes['gen_ai.request.model'] === 'traced')!;
    expect(call).toBeDefined();
    // Every span descends from the run span.
    const byId = new Map(trace.spans.map((span) => [span.spanId, span]));
    for (const span of trace.spans.filter((candidate) => candidate !== run)) {
      let ancestor = byId.get(span.parentSpanId!);
      while (ancestor && ancestor !== run) ancestor = byId.get(ancestor.parentSpanId!);
      expect(ancestor, `${span.name} under the run span`).toBe(run);
    }
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(trace)).not.toContain('canary-7731');
  });

  it('holds tool calls, and a child run’s span under the tool call of its parent, in one trace', async () => {
    const clocked = await traceOf(everyRun, await runOnce(everyRun, 'clocked', 'time?'));
    expect(clocked.spans.some((span) => span.name === 'ai.toolCall' && span.attributes['ai.toolCall.name'] === 'clock')).toBe(true);

    const parentId = await runOnce(everyRun, 'delegating', 'delegate');
    const parentTrace = await traceOf(everyRun, parentId);
    const toolCall = parentTrace.spans.find((span) => span.name === 'ai.toolCall')!;
    const tree = (await everyRun.request('GET', `/api/runs/${parentId}/tree`)).body as Array<{ id: string; parentRunId: string | null }>;
    const childId = tree.find((run) => run.parentRunId === parentId)!.id;
    const childTrace = await traceOf(everyRun, childId);
    expect(childTrace.traceId).toBe(parentTrace.traceId);
    const childRunSpan = childTrace.spans.find((span) => span.attributes['hangar.run.id'] === childId)!;
    expect(childRunSpan.parentSpanId).toBe(toolCall.spanId);
    expect(childRunSpan.attributes['hangar.parent_run.id']).toBe(parentId);
  });
});

describe('sampling', () => {
  it('keeps a failed run’s trace with SuccessSampleRatio 0, and no successful one', async () => {
    const failed = await runOnce(failuresOnly, 'broken', 'fail please');
    const trace = await traceOf(failuresOnly, failed);
    expect(trace.spans.find((span) => span.attributes['hangar.run.id'] === failed)).toMatchObject({
      status: 'Error',
      attributes: { 'hangar.run.status': 'Failed', 'error.type': expect.any(String) },
    });
    const succeeded = await runOnce(failuresOnly, 'traced', 'succeed');
    // Kept traces are written when the run span ends; a failed one written after this run shows the writes are done.
    await traceOf(failuresOnly, await runOnce(failuresOnly, 'broken', 'after'));
    expect((await failuresOnly.request('GET', `/api/runs/${succeeded}/trace`)).body).toEqual({
      runId: succeeded,
      traceId: null,
      spans: [],
    });
  });

  it('answers 404 for an unknown run', async () => {
    expect((await everyRun.request('GET', '/api/runs/00000000-0000-4000-8000-000000000000/trace')).status).toBe(404);
  });
});

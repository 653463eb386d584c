import { describe, expect, it } from 'vitest';
import { createHarness, textAnswer, toolCallAnswer } from './engine-harness.js';

const CLOCK_CATALOG = async () =>
  new Map([['clock', { description: 'The time', inputSchema: { type: 'object', properties: { timeZone: { type: 'string' } } } }]]);

describe('the model loop', () => {
  it('answers with the primary model and records usage, the model and the terminal event', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('hello there')] } });
    const { run, text } = await harness.run();
    expect(text).toBe('hello there');
    expect(run).toMatchObject({ status: 'Completed', modelProvider: 'fake', model: 'primary', errorType: null });
    expect(run.usage).toMatchObject({ inputTokens: 3, outputTokens: 2, totalTokens: 5 });
    expect(harness.eventTypes(run.id)).toEqual(['run.started', 'message.delta', 'message.delta', 'message.completed', 'run.completed']);
  });

  it('falls back to the next model when the primary fails before any output', async () => {
    const harness = createHarness({
      agent: { model: { provider: 'fake', model: 'primary', fallbacks: [{ provider: 'fake', model: 'backup' }] } },
      models: { 'fake/primary': [new Error('upstream 500')], 'fake/backup': [textAnswer('from backup')] },
    });
    const { run, text } = await harness.run();
    expect(text).toBe('from backup');
    expect(run).toMatchObject({ status: 'Completed', model: 'backup' });
  });

  it('fails provider_unavailable when every model fails, and provider_unavailable for a provider that is not configured', async () => {
    const harness = createHarness({
      agent: { model: { provider: 'fake', model: 'primary', fallbacks: [{ provider: 'fake', model: 'missing' }] } },
      models: { 'fake/primary': [new Error('upstream 500')] },
    });
    const { run } = await harness.run();
    expect(run).toMatchObject({ status: 'Failed', errorType: 'provider_unavailable' });
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.failed');
  });

  it('opens the circuit after FailureThreshold failures and stops calling that model', async () => {
    const failures = Array.from({ length: 3 }, () => new Error('upstream 500'));
    const harness = createHarness({ config: { CircuitBreaker: { FailureThreshold: 3 } }, models: { 'fake/primary': failures } });
    for (let attempt = 0; attempt < 3; attempt++) await harness.run();
    const { run } = await harness.run();
    expect(run).toMatchObject({
      status: 'Failed',
      errorType: 'provider_unavailable',
      errorMessage: 'the circuit for fake/primary is open',
    });
    expect(harness.models.get('fake/primary')!.calls()).toBe(3);
  });

  it('asks again for JSON that does not match the schema, up to MaxRepairAttempts', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
    const harness = createHarness({
      config: { StructuredResponse: { Enabled: true, MaxRepairAttempts: 1 } },
      agent: { responseFormat: { kind: 'JsonSchema', schema } },
      models: { 'fake/primary': [textAnswer('{"answer": "x"}'), textAnswer('{"answer": 42}')] },
    });
    const { run } = await harness.run();
    expect(run.status).toBe('Completed');
    expect(harness.models.get('fake/primary')!.calls()).toBe(2);

    const stubborn = createHarness({
      config: { StructuredResponse: { Enabled: true, MaxRepairAttempts: 1 } },
      agent: { responseFormat: { kind: 'JsonSchema', schema } },
      models: { 'fake/primary': [textAnswer('not json'), textAnswer('still not')] },
    });
    expect((await stubborn.run()).run).toMatchObject({ status: 'Failed', errorType: 'invalid_structured_response' });
  });

  it('blocks an answer with a denied term (content guard) and never sends blocked input to a model', async () => {
    const guarded = { ContentGuard: { Pattern: { DeniedTerms: ['forbidden'] } } };
    const output = createHarness({ config: guarded, models: { 'fake/primary': [textAnswer('this is forbidden text')] } });
    const answer = await output.run();
    expect(answer.run).toMatchObject({ status: 'Failed', errorType: 'content_blocked' });
    expect(answer.text).toBe('');

    const input = createHarness({ config: guarded, models: { 'fake/primary': [] } });
    expect((await input.run('say forbidden')).run).toMatchObject({ status: 'Failed', errorType: 'content_blocked' });
  });

  it('stops the tree between turns past AgentGraph:MaxTotalTokens', async () => {
    const harness = createHarness({
      config: { AgentGraph: { MaxTotalTokens: 3 } },
      agent: { tools: ['clock'] },
      toolCatalog: CLOCK_CATALOG,
      models: { 'fake/primary': [toolCallAnswer('clock', {}), textAnswer('never reached')] },
    });
    const { run } = await harness.run();
    expect(run).toMatchObject({ status: 'Failed', errorType: 'agent_graph_limit' });
    expect(harness.models.get('fake/primary')!.calls()).toBe(1);
  });

  it('runs a callable agent as a child run and gives its answer to the parent’s model', async () => {
    const harness = createHarness({
      agent: { agents: ['helper'] },
      agents: [{ name: 'helper', model: { provider: 'fake', model: 'child' } }],
      models: {
        'fake/primary': [toolCallAnswer('call_helper', { message: 'help' }), textAnswer('done')],
        'fake/child': [textAnswer('helped')],
      },
    });
    const { run, updates } = await harness.run();
    expect(run.status).toBe('Completed');
    const child = updates.find((update) => update.type === 'child-run');
    expect(child).toMatchObject({ agentName: 'helper' });
    expect(harness.stores.runs.get((child as { runId: string }).runId)).toMatchObject({
      status: 'Completed',
      parentRunId: run.id,
      depth: 1,
    });
    expect(harness.eventTypes(run.id)).toContain('child.completed');
  });

  it('waits for a decision on a tool that needs approval, runs it once approved, and goes on', async () => {
    const harness = createHarness({
      config: { Approvals: { RequiredTools: ['clock'] } },
      agent: { tools: ['clock'] },
      toolCatalog: CLOCK_CATALOG,
      models: { 'fake/primary': [toolCallAnswer('clock', {}), textAnswer('it is late')] },
    });
    const running = harness.run();
    let approvalId: string | undefined;
    while (!approvalId) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      approvalId = harness.stores.approvals[0]?.id;
    }
    const runId = harness.stores.approvals[0].runId;
    expect(harness.stores.runs.get(runId)!.status).toBe('AwaitingApproval');
    await harness.engine.decideApproval({ tenantId: 't1', actor: 'reviewer' }, runId, approvalId, { approved: true });
    const { run, text } = await running;
    expect(run.status).toBe('Completed');
    expect(text).toBe('it is late');
    expect(harness.eventTypes(run.id)).toEqual(
      expect.arrayContaining(['approval.requested', 'approval.decided', 'tool.completed', 'run.completed']),
    );
  });

  it('cancels a run waiting for approval: Canceled, no error type', async () => {
    const harness = createHarness({
      config: { Approvals: { RequiredTools: ['clock'] } },
      agent: { tools: ['clock'] },
      toolCatalog: CLOCK_CATALOG,
      models: { 'fake/primary': [toolCallAnswer('clock', {})] },
    });
    const running = harness.run();
    while (!harness.stores.approvals.length) await new Promise((resolve) => setTimeout(resolve, 5));
    await harness.engine.cancel({ tenantId: 't1', actor: 'test' }, harness.stores.approvals[0].runId);
    const { run } = await running;
    expect(run).toMatchObject({ status: 'Canceled', errorType: null });
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.canceled');
  });

  it('does not blame the model for a store fault in an approval round: the circuit stays closed', async () => {
    const harness = createHarness({
      config: { Approvals: { RequiredTools: ['clock'] }, CircuitBreaker: { FailureThreshold: 1 } },
      agent: { tools: ['clock'] },
      toolCatalog: CLOCK_CATALOG,
      models: { 'fake/primary': [toolCallAnswer('clock', {}), textAnswer('the model still answers')] },
    });
    harness.stores.approvalRepository.requestApprovals = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    };
    expect((await harness.run()).run).toMatchObject({ status: 'Failed', errorType: 'service_unavailable' });
    expect((await harness.run()).text).toBe('the model still answers');
  });

  it('starts no run for a caller that left while it was being prepared', async () => {
    const harness = createHarness({ models: { 'fake/primary': [] } });
    const gone = new AbortController();
    gone.abort();
    const updates = [];
    for await (const update of harness.engine.start(
      { tenantId: 't1', actor: 'test' },
      { agentName: 'assistant', messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: true, attachments: [] },
      gone.signal,
    ))
      updates.push(update);
    expect(updates).toEqual([]);
    expect(harness.stores.runs.size).toBe(0);
  });
});

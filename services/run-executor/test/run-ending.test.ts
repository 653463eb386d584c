import { describe, expect, it, vi } from 'vitest';
import { createHarness, textAnswer, toolCallAnswer } from './engine-harness.js';

/** A queued run's row, as `Prefer: respond-async` leaves it for a worker. */
const insertQueuedRun = (harness: ReturnType<typeof createHarness>, runId: string, agentName: string) =>
  harness.stores.runRepository.insert!(
    't1',
    {
      id: runId,
      agentName,
      agentVersion: 1,
      sessionId: null,
      kind: 'Async',
      isStreaming: false,
      rootRunId: runId,
      parentRunId: null,
      depth: 0,
      userId: null,
      labels: {},
    },
    'Queued',
  );

/** The job a worker leases for that run. */
const queuedJob = (runId: string, agentName: string) => ({
  runId,
  payload: {
    caller: { tenantId: 't1', actor: 'test' },
    request: { agentName, messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: false, attachments: [] },
  },
});

/** Whatever throws once a run's row exists, the run ends: Failed, a terminal event stored, its tail ended, its caller told. */
describe('every run ends', () => {
  it('a session append that throws ends the run Failed with a terminal event', async () => {
    const harness = createHarness({
      models: { 'fake/primary': [textAnswer('hi there')] },
      sessions: {
        open: async () => [],
        append: async () => {
          throw new Error('session service down');
        },
      },
    });
    const { updates, run } = await harness.run('hello', { sessionId: 's1' });
    expect(updates.at(-1)).toMatchObject({ type: 'failed', errorType: 'internal_error' });
    expect(harness.stores.runs.get(run.id)).toMatchObject({ status: 'Failed', errorType: 'internal_error' });
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.failed');
    expect((await harness.tail(run.id)).at(-1)).toBe('run.failed');
  });

  it('names an engine that went away: service_unavailable rather than internal_error', async () => {
    const harness = createHarness({
      models: { 'fake/primary': [textAnswer('hi')] },
      sessions: {
        open: async () => [],
        append: async () => {
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        },
      },
    });
    const { run } = await harness.run('hello', { sessionId: 's1' });
    expect(run).toMatchObject({ status: 'Failed', errorType: 'service_unavailable' });
  });

  it('a tool catalog that cannot be read ends the run Failed with a terminal event', async () => {
    const harness = createHarness({
      agent: { tools: ['clock'] },
      models: { 'fake/primary': [] },
      toolCatalog: async () => {
        throw new Error('registry unavailable');
      },
    });
    const { updates, run } = await harness.run();
    expect(updates.map((update) => update.type)).toEqual(['started', 'failed']);
    expect(harness.stores.runs.get(run.id)).toMatchObject({ status: 'Failed', errorType: 'internal_error' });
    expect(await harness.tail(run.id)).toEqual(['run.started', 'run.failed']);
  });

  it('an event store that fails on the run’s first read ends the run Failed; the tail still ends', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('never used')] } });
    const queuedRunId = '00000000-0000-4000-8000-000000000001';
    await insertQueuedRun(harness, queuedRunId, 'assistant');
    let reads = 0;
    harness.stores.eventRepository.lastSeq = async () => {
      if (reads++ === 0) throw new Error('connection terminated');
      return 0;
    };
    const run = await harness.engine.runQueued(queuedJob(queuedRunId, 'assistant'), new AbortController().signal);
    expect(run).toMatchObject({ status: 'Failed', errorType: 'internal_error' });
    expect(harness.eventTypes(queuedRunId)).toEqual(['run.failed']);
    expect(await harness.tail(queuedRunId)).toEqual(['run.failed']);
  });

  it('a queued run refused when it starts (its agent is gone) ends Failed with a terminal event', async () => {
    const harness = createHarness({ models: { 'fake/primary': [] } });
    const runId = '00000000-0000-4000-8000-000000000002';
    await insertQueuedRun(harness, runId, 'deleted');
    const run = await harness.engine.runQueued(queuedJob(runId, 'deleted'), new AbortController().signal);
    expect(run).toMatchObject({ status: 'Failed' });
    expect(harness.eventTypes(runId)).toEqual(['run.failed']);
    expect(await harness.tail(runId)).toEqual(['run.failed']);
  });

  it('a queued run of a tenant disabled since it was queued ends Failed tenant_disabled, without a model call', async () => {
    const harness = createHarness({ models: { 'fake/primary': [] }, tenantSettings: async () => ({ enabled: false, providers: {} }) });
    const runId = '00000000-0000-4000-8000-000000000003';
    await insertQueuedRun(harness, runId, 'assistant');
    const run = await harness.engine.runQueued(queuedJob(runId, 'assistant'), new AbortController().signal);
    expect(run).toMatchObject({ status: 'Failed', errorType: 'tenant_disabled' });
    expect(harness.eventTypes(runId)).toEqual(['run.failed']);
  });

  it('records the end through a short outage: the finish is tried again while the engine is away', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('done')] } });
    const finish = harness.stores.runRepository.finish!;
    let refusals = 2;
    harness.stores.runRepository.finish = async (runId, outcome) => {
      if (refusals-- > 0) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return finish(runId, outcome);
    };
    const { run } = await harness.run();
    expect(harness.stores.runs.get(run.id)).toMatchObject({ status: 'Completed' });
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.completed');
  });

  it('keeps the first ending: a run closed elsewhere meanwhile (an orphan scan) gets no second terminal event', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('late answer')] } });
    const finish = harness.stores.runRepository.finish!;
    harness.stores.runRepository.finish = async (runId, outcome) => {
      await finish(runId, { ...outcome, status: 'Failed', errorType: 'orphaned', errorMessage: 'closed by a scan' });
      return finish(runId, outcome);
    };
    const { run } = await harness.run();
    expect(run).toMatchObject({ status: 'Failed', errorType: 'orphaned' });
    expect(harness.eventTypes(run.id).filter((type) => type.startsWith('run.') && type !== 'run.started')).toEqual([]);
  });

  it('does not execute a queued run again once it ended (its worker died before closing the job)', async () => {
    const harness = createHarness({ models: { 'fake/primary': [] } });
    const runId = '00000000-0000-4000-8000-000000000003';
    await insertQueuedRun(harness, runId, 'assistant');
    await harness.stores.runRepository.finish!(runId, {
      status: 'Completed',
      usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 2 },
      cost: null,
      prices: { input: null, output: null, cachedInput: null },
      errorType: null,
      errorMessage: null,
    });
    const job = queuedJob(runId, 'assistant');
    await harness.engine.runQueued(job, new AbortController().signal);
    expect(await harness.engine.abandonQueued({ tenantId: 't1', runId, maxAttempts: 1 })).toBeUndefined();
    expect(harness.stores.runs.get(runId)!.status).toBe('Completed');
    expect(harness.models.get('fake/primary')!.calls()).toBe(0);
    expect(harness.eventTypes(runId)).toEqual([]);
  });

  it('sends the model request while the row is written; the caller hears of the run, and events are stored, once it is', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('hi')] } });
    const insert = harness.stores.runRepository.insert!;
    const appendEvents = harness.stores.eventRepository.appendEvents!;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const seen: string[] = [];
    harness.stores.runRepository.insert = async (...args) => {
      await held;
      seen.push('row');
      return insert(...args);
    };
    harness.stores.eventRepository.appendEvents = async (target, events) => {
      seen.push('events');
      return appendEvents(target, events);
    };
    const updates = harness.engine
      .start(
        { tenantId: 't1', actor: 'test' },
        { agentName: 'assistant', messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: true, attachments: [] },
        new AbortController().signal,
      )
      [Symbol.asyncIterator]();
    const first = updates.next();
    await vi.waitFor(() => expect(harness.models.get('fake/primary')!.calls()).toBe(1));
    expect(seen).toEqual([]);
    release();
    expect((await first).value).toMatchObject({ type: 'started' });
    expect(seen[0]).toBe('row');
    while (!(await updates.next()).done);
    expect(seen.filter((step) => step === 'events').length).toBeGreaterThan(0);
  });

  it('an input the store refuses costs the run its input, not its record', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('hi')] } });
    const insert = harness.stores.runRepository.insert!;
    harness.stores.runRepository.insert = async (tenantId, run, status, record) => {
      if (record?.input !== undefined) throw new Error('value too long for type');
      return insert(tenantId, run, status, record);
    };
    const { run } = await harness.run();
    expect(harness.stores.runs.get(run.id)).toMatchObject({ status: 'Completed', modelProvider: 'fake', model: 'primary' });
    expect(harness.stores.inputs.has(run.id)).toBe(false);
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.completed');
  });

  it('event writes that fail for a while do not stop the run, and its end is still recorded', async () => {
    // Each event in a write of its own, so the failures hit the first writes and spare the last.
    const harness = createHarness({
      models: { 'fake/primary': [textAnswer('one two three')] },
      config: { Hangar: { Runs: { EventBatchWindow: 0 } } },
    });
    const append = harness.stores.eventRepository.appendEvents!;
    let failures = 2;
    harness.stores.eventRepository.appendEvents = async (target, events) => {
      if (failures-- > 0) throw new Error('too many connections');
      return append(target, events);
    };
    const { run, text } = await harness.run();
    expect(text).toBe('one two three');
    expect(run.status).toBe('Completed');
    expect(harness.eventTypes(run.id).at(-1)).toBe('run.completed');
  });

  it('a caller that stops reading mid-turn: the run records the model steps finished until then', async () => {
    const harness = createHarness({
      agent: { tools: ['clock'] },
      toolCatalog: async () => new Map([['clock', { description: 'The time', inputSchema: { type: 'object', properties: {} } }]]),
      models: { 'fake/primary': [toolCallAnswer('clock', {}), textAnswer('a long answer that the caller never reads')] },
    });
    const updates = harness.engine.start(
      { tenantId: 't1', actor: 'test' },
      { agentName: 'assistant', messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: true, attachments: [] },
      new AbortController().signal,
    );
    let runId = '';
    for (let next = await updates.next(); !next.done; next = await updates.next()) {
      if (next.value.type === 'started') runId = next.value.run.id;
      if (next.value.type === 'text-delta') break;
    }
    await updates.return(undefined);
    expect(harness.stores.runs.get(runId)).toMatchObject({ status: 'Canceled', usage: { totalTokens: 4 } });
  });

  it('a caller that stops reading ends the run Canceled, with no error type', async () => {
    const harness = createHarness({ models: { 'fake/primary': [textAnswer('a long answer of many words that keeps coming')] } });
    const updates = harness.engine.start(
      { tenantId: 't1', actor: 'test' },
      { agentName: 'assistant', messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: true, attachments: [] },
      new AbortController().signal,
    );
    const first = await updates.next();
    expect(first.value).toMatchObject({ type: 'started' });
    const runId = (first.value as { run: { id: string } }).run.id;
    await updates.next();
    await updates.return(undefined);
    expect(harness.stores.runs.get(runId)).toMatchObject({ status: 'Canceled', errorType: null, errorMessage: null });
    expect(harness.eventTypes(runId).at(-1)).toBe('run.canceled');
  });
});

import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  parseSseFrames,
  startHangar,
  startMockOpenAI,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Workflows" on all-in-one: definitions, runs in super steps, human input, checkpoints, limits, isolation. */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
let hangar: HangarUnderTest;
let mock: MockOpenAI;

/** draft → fan-out to review (a human) and summary (an agent); the run's output is both. */
const REVIEWED = {
  description: 'A draft, reviewed by a human while an agent summarises it',
  steps: [
    { id: 'draft', kind: 'agent', agent: 'echoer', prompt: 'Draft a note about' },
    { id: 'review', kind: 'input', prompt: 'Publish this draft?' },
    { id: 'summary', kind: 'agent', agent: 'echoer' },
  ],
  edges: [
    { from: 'draft', to: 'review' },
    { from: 'draft', to: 'summary' },
  ],
};

const put = (name: string, body: unknown, headers = acme) => hangar.request('PUT', `/api/workflows/${name}`, { body, headers });
const start = (name: string, body: unknown, headers = acme) => hangar.request('POST', `/api/workflows/${name}/run`, { body, headers });
const runOf = async (id: string, headers = acme) => (await hangar.request('GET', `/api/workflow-runs/${id}`, { headers })).body;
const untilStatus = (id: string, status: string, timeoutMs?: number) =>
  eventually(
    async () => {
      const run = await runOf(id);
      return run.status === status ? run : undefined;
    },
    `workflow run ${id} to be ${status}`,
    timeoutMs,
  );
const eventTypes = async (id: string) => {
  const response = await fetch(`${hangar.url}/api/runs/${id}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}`, ...acme } });
  return parseSseFrames(await response.text()).map((frame) => frame.data.type as string);
};

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('slow', () => ({ delayMs: 1500, then: { text: 'slowly summarised' } }));
  mock.script('very-slow', () => ({ delayMs: 20_000, then: { text: 'never needed' } }));
  mock.script('broken', () => ({ status: 500, body: 'upstream broke' }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Workflows: { MaxSuperSteps: 5 },
      // No retries: the broken model fails its step at once.
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url, MaxRetries: 0 } },
    },
  });
  for (const headers of [acme, globex]) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name: 'echoer', model: { provider: 'demo', model: 'echo' } },
      headers,
    });
    expect(created.status, created.text).toBe(201);
  }
  for (const [name, model] of [
    ['slowpoke', 'slow'],
    ['sloth', 'very-slow'],
    ['breaker', 'broken'],
    ['doomed', 'slow'],
  ]) {
    const created = await hangar.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model } }, headers: acme });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('workflow definitions', () => {
  it('stores versions (201, then 200), reads the current or a given one, lists, shows the graph and deletes', async () => {
    const created = await put('reviewed', REVIEWED);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'reviewed',
      version: 1,
      steps: REVIEWED.steps,
      edges: REVIEWED.edges,
      description: REVIEWED.description,
    });
    const next = await put('reviewed', { ...REVIEWED, description: 'second' });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ version: 2, description: 'second', createdAt: created.body.createdAt });
    expect((await hangar.request('GET', '/api/workflows/reviewed', { headers: acme })).body).toMatchObject({ version: 2 });
    expect((await hangar.request('GET', '/api/workflows/reviewed?version=1', { headers: acme })).body).toMatchObject({
      version: 1,
      description: REVIEWED.description,
    });
    expectProblem(await hangar.request('GET', '/api/workflows/reviewed?version=9', { headers: acme }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/workflows/reviewed/graph', { headers: acme })).body).toEqual({
      name: 'reviewed',
      version: 2,
      nodes: [
        { id: 'draft', kind: 'agent', agent: 'echoer' },
        { id: 'review', kind: 'input' },
        { id: 'summary', kind: 'agent', agent: 'echoer' },
      ],
      edges: REVIEWED.edges,
      entries: ['draft'],
    });
    expect((await put('doomed', REVIEWED)).status).toBe(201);
    const listed = (await hangar.request('GET', '/api/workflows', { headers: acme })).body as Array<{ name: string; version: number }>;
    expect(listed.map(({ name, version }) => [name, version])).toEqual([
      ['doomed', 1],
      ['reviewed', 2],
    ]);
    expect((await hangar.request('DELETE', '/api/workflows/doomed', { headers: acme })).status).toBe(204);
    expectProblem(await hangar.request('GET', '/api/workflows/doomed', { headers: acme }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/workflows/doomed', { headers: acme }), 404, 'not_found');
  });

  it('refuses an unknown agent, a graph that cannot run and a bad shape with 400, storing nothing', async () => {
    const unknown = await put('broken', { steps: [{ id: 'a', kind: 'agent', agent: 'nobody' }], edges: [] });
    expectProblem(unknown, 400, 'validation_failed');
    expect(unknown.body.errors).toEqual([{ path: 'steps.0.agent', message: 'no agent named "nobody"' }]);
    const endless = await put('broken', {
      steps: [
        { id: 'a', kind: 'agent', agent: 'echoer' },
        { id: 'b', kind: 'agent', agent: 'echoer' },
        { id: 'c', kind: 'agent', agent: 'echoer' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
        { from: 'c', to: 'b' },
      ],
    });
    expectProblem(endless, 400, 'validation_failed');
    expect(endless.body.errors).toEqual([{ path: 'edges', message: 'the cycle b → c has no edge out of it' }]);
    expectProblem(await put('broken', { steps: [{ id: 'a', kind: 'teleport' }], edges: [] }), 400, 'validation_failed');
    expectProblem(await put('no spaces', REVIEWED), 400, 'validation_failed');
    expectProblem(await hangar.request('GET', '/api/workflows/broken', { headers: acme }), 404, 'not_found');
  });
});

describe('workflow runs', () => {
  it('runs super steps: the fan-out pauses for a human, the answer completes it; steps are runs in its tree', async () => {
    expect((await put('review-flow', REVIEWED)).status).toBe(201);
    const started = await start('review-flow', { input: 'the launch' });
    expect(started.status, started.text).toBe(202);
    const { workflowRunId } = started.body;
    expect(started.headers.get('location')).toBe(`/api/workflow-runs/${workflowRunId}`);

    const paused = await untilStatus(workflowRunId, 'AwaitingApproval');
    expect(paused).toMatchObject({ workflow: 'review-flow', version: 1, superStep: 2, input: 'the launch', output: null });
    expect(Object.keys(paused.outputs).sort()).toEqual(['draft', 'summary']);
    expect(paused.outputs.draft).toContain('the launch');
    const [request] = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: acme })).body;
    expect(request).toMatchObject({ stepId: 'review', superStep: 2, status: 'Pending', answer: null });
    expect(request.prompt).toContain('Publish this draft?');
    expect(request.prompt).toContain(paused.outputs.draft);

    const answered = await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${request.id}`, {
      body: { answer: 'yes, ship it' },
      headers: acme,
    });
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body).toMatchObject({ status: 'Answered', answer: 'yes, ship it', answeredBy: expect.any(String) });
    expectProblem(
      await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${request.id}`, {
        body: { answer: 'again' },
        headers: acme,
      }),
      409,
      'conflict',
    );

    const completed = await untilStatus(workflowRunId, 'Completed');
    expect(completed.output).toEqual({ review: 'yes, ship it', summary: paused.outputs.summary });
    expect(completed.completedAt).toEqual(expect.any(String));
    const checkpoints = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/checkpoints`, { headers: acme })).body;
    expect(checkpoints.map((checkpoint: any) => [checkpoint.superStep, checkpoint.state.active])).toEqual([
      [1, ['draft']],
      [2, ['review', 'summary']],
    ]);

    const tree = (await hangar.request('GET', `/api/runs/${workflowRunId}/tree`, { headers: acme })).body;
    const runs = (tree.runs ?? tree) as Array<{ id: string; kind: string; status: string; parentRunId: string | null }>;
    expect(runs.map((run) => [run.kind, run.status, run.parentRunId === null ? null : 'child']).sort()).toEqual([
      ['Child', 'Completed', 'child'],
      ['Child', 'Completed', 'child'],
      ['Workflow', 'Completed', null],
    ]);
    const record = (await hangar.request('GET', `/api/runs/${workflowRunId}`, { headers: acme })).body;
    expect(record).toMatchObject({ kind: 'Workflow', agentName: 'review-flow', agentVersion: 1, status: 'Completed', errorType: null });
    expect(record.usage.totalTokens).toBeGreaterThan(0);
    const types = await eventTypes(workflowRunId);
    // Super step 2's two steps go on side by side: their events interleave.
    const secondSuperStep = types.slice(5, 9);
    expect(types.slice(0, 5)).toEqual([
      'run.started',
      'workflow.superstep.started',
      'workflow.step.started',
      'workflow.step.completed',
      'workflow.checkpoint',
    ]);
    expect([...secondSuperStep].sort()).toEqual([
      'workflow.input.requested',
      'workflow.step.completed',
      'workflow.step.started',
      'workflow.superstep.started',
    ]);
    expect(types.slice(9)).toEqual([
      'workflow.resumed',
      'workflow.step.completed',
      'workflow.checkpoint',
      'workflow.completed',
      'run.completed',
    ]);
  });

  it('keeps runs, requests and workflows to their tenant', async () => {
    expect((await put('private-flow', REVIEWED)).status).toBe(201);
    const { workflowRunId } = (await start('private-flow', { input: 'secret plans' })).body;
    await untilStatus(workflowRunId, 'AwaitingApproval');
    expectProblem(await hangar.request('GET', '/api/workflows/private-flow', { headers: globex }), 404, 'not_found');
    expectProblem(await start('private-flow', { input: 'x' }, globex), 404, 'not_found');
    expectProblem(await hangar.request('GET', `/api/workflow-runs/${workflowRunId}`, { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: globex }), 404, 'not_found');
    const [request] = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: acme })).body;
    expectProblem(
      await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${request.id}`, {
        body: { answer: 'no' },
        headers: globex,
      }),
      404,
      'not_found',
    );
    expect((await hangar.request('GET', '/api/workflows', { headers: globex })).body).toEqual([]);
  });

  it('cancels a run paused for a human (through the runs API): it ends Canceled, its question unanswered', async () => {
    const { workflowRunId } = (await start('review-flow', { input: 'never mind' })).body;
    await untilStatus(workflowRunId, 'AwaitingApproval');
    const canceled = await hangar.request('POST', `/api/runs/${workflowRunId}/cancel`, { headers: acme });
    expect(canceled.status, canceled.text).toBeLessThan(300);
    const run = await untilStatus(workflowRunId, 'Canceled');
    expect(run.errorType).toBeNull();
    expect((await eventTypes(workflowRunId)).at(-1)).toBe('run.canceled');
    const [request] = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: acme })).body;
    expect(request.status).toBe('Pending');
  });

  it('fills transforms and follows conditions; a loop that never leaves fails at Workflows:MaxSuperSteps', async () => {
    const looping = {
      steps: [
        { id: 'start', kind: 'transform', template: '{{parameters.greeting}}, {{input}}' },
        { id: 'again', kind: 'transform', template: 'again: {{start}}' },
        { id: 'done', kind: 'transform', template: 'done' },
      ],
      edges: [
        { from: 'start', to: 'again' },
        { from: 'again', to: 'again', when: { contains: 'again' } },
        { from: 'again', to: 'done', when: { contains: 'stop' } },
      ],
    };
    expect((await put('looping', looping)).status).toBe(201);
    const { workflowRunId } = (await start('looping', { input: 'world', parameters: { greeting: 'hello' } })).body;
    const failed = await untilStatus(workflowRunId, 'Failed');
    expect(failed).toMatchObject({
      errorType: 'workflow_limit',
      superStep: 6,
      outputs: { start: 'hello, world', again: 'again: hello, world' },
    });
    expect(failed.errorMessage).toContain('Workflows:MaxSuperSteps (5)');

    expect(
      (
        await put('branching', {
          ...looping,
          steps: [{ ...looping.steps[0], template: 'stop {{input}}' }, { ...looping.steps[1], template: '{{start}}' }, looping.steps[2]],
        })
      ).status,
    ).toBe(201);
    const branched = (await start('branching', { input: { n: 1 } })).body.workflowRunId;
    expect(await untilStatus(branched, 'Completed')).toMatchObject({ output: 'done', superStep: 3, outputs: { start: 'stop {"n":1}' } });
  });

  it('gives an agent step the workflow run’s parameters its agent declares; a required one not given fails the step', async () => {
    mock.script('concierge', () => ({ text: 'at your service' }));
    const created = await hangar.request('POST', '/api/agents', {
      body: {
        name: 'concierge',
        model: { provider: 'mock', model: 'concierge' },
        instructions: 'You serve {{customer}}.',
        parameters: [{ name: 'customer', description: 'who is served', required: true }],
      },
      headers: acme,
    });
    expect(created.status, created.text).toBe(201);
    expect((await put('served', { steps: [{ id: 'greet', kind: 'agent', agent: 'concierge' }], edges: [] })).status).toBe(201);
    // `unrelated` is the workflow's own (a transform could read it): the agent, which does not declare it, is not given it.
    const served = (await start('served', { input: 'hello', parameters: { customer: 'ACME', unrelated: 'kept out' } })).body.workflowRunId;
    expect(await untilStatus(served, 'Completed')).toMatchObject({ outputs: { greet: 'at your service' } });
    const asked = mock.requests.filter((request) => request.model === 'concierge');
    expect(asked).toHaveLength(1);
    expect(asked[0].messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You serve ACME.') });

    const unserved = (await start('served', { input: 'hello' })).body.workflowRunId;
    const failed = await untilStatus(unserved, 'Failed');
    expect(failed.errorType).toBe('workflow_step_failed');
    expect(failed.errorMessage).toContain('parameter "customer" is required');
    expect(mock.requests.filter((request) => request.model === 'concierge')).toHaveLength(1);
  });

  it('goes on when the answer comes while another step of the super step still runs', async () => {
    const flow = { ...REVIEWED, steps: [REVIEWED.steps[0], REVIEWED.steps[1], { id: 'summary', kind: 'agent', agent: 'slowpoke' }] };
    expect((await put('answered-early', flow)).status).toBe(201);
    const { workflowRunId } = (await start('answered-early', { input: 'quick' })).body;
    const request = await eventually(async () => {
      const [pending] = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: acme })).body;
      return pending;
    }, 'the question');
    // The summary's model answers only after 1.5 s: the question is answered while it runs.
    expect((await runOf(workflowRunId)).status).toBe('Running');
    const answered = await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${request.id}`, {
      body: { answer: 'yes' },
      headers: acme,
    });
    expect(answered.status, answered.text).toBe(200);
    const completed = await untilStatus(workflowRunId, 'Completed');
    expect(completed.output).toEqual({ review: 'yes', summary: 'slowly summarised' });
  });

  it('fails on a step that fails, ending the steps beside it; names a step whose agent is gone', async () => {
    const fanOut = {
      steps: [
        { id: 'start', kind: 'transform', template: '{{input}}' },
        { id: 'bad', kind: 'agent', agent: 'breaker' },
        { id: 'long', kind: 'agent', agent: 'sloth' },
      ],
      edges: [
        { from: 'start', to: 'bad' },
        { from: 'start', to: 'long' },
      ],
    };
    expect((await put('half-broken', fanOut)).status).toBe(201);
    const { workflowRunId } = (await start('half-broken', { input: 'go' })).body;
    const failed = await untilStatus(workflowRunId, 'Failed', 10_000);
    expect(failed.errorType).toBe('workflow_step_failed');
    expect(failed.errorMessage).toContain('step "bad" (agent breaker)');
    const tree = (await hangar.request('GET', `/api/runs/${workflowRunId}/tree`, { headers: acme })).body;
    const steps = ((tree.runs ?? tree) as Array<{ agentName: string; status: string; parentRunId: string | null }>)
      .filter((run) => run.parentRunId === workflowRunId)
      .map((run) => [run.agentName, run.status])
      .sort();
    expect(steps).toEqual([
      ['breaker', 'Failed'],
      ['sloth', 'Canceled'],
    ]);

    expect((await put('orphaned', { steps: [{ id: 'only', kind: 'agent', agent: 'doomed' }], edges: [] })).status).toBe(201);
    expect((await hangar.request('DELETE', '/api/agents/doomed', { headers: acme })).status).toBe(204);
    const orphaned = (await start('orphaned', { input: 'go' })).body.workflowRunId;
    expect(await untilStatus(orphaned, 'Failed')).toMatchObject({
      errorType: 'workflow_step_failed',
      errorMessage: expect.stringContaining('step "only" (agent doomed) could not run'),
    });
  });

  it('takes step ids that are names of object properties; fails a transform that would grow too large', async () => {
    const odd = {
      steps: [
        { id: 'constructor', kind: 'transform', template: 'built {{input}}' },
        { id: 'toString', kind: 'transform', template: '{{constructor}}!' },
      ],
      edges: [{ from: 'constructor', to: 'toString', when: { contains: 'built' } }],
    };
    expect((await put('odd-names', odd)).status).toBe(201);
    const oddRun = (await start('odd-names', { input: 'it' })).body.workflowRunId;
    expect(await untilStatus(oddRun, 'Completed')).toMatchObject({ output: 'built it!', superStep: 2 });

    const growing = { steps: [{ id: 'grow', kind: 'transform', template: '{{input}}'.repeat(1500) }], edges: [] };
    expect((await put('growing', growing)).status).toBe(201);
    const grown = (await start('growing', { input: 'x'.repeat(10_000) })).body.workflowRunId;
    expect(await untilStatus(grown, 'Failed')).toMatchObject({ errorType: 'workflow_output_too_large' });
  });

  it('refuses a run without input, of an unknown workflow, and answers to unknown requests', async () => {
    expectProblem(await start('review-flow', {}), 400, 'validation_failed');
    expectProblem(await start('review-flow', { input: 'x', extra: 1 }), 400, 'validation_failed');
    const deep = (levels: number) => Array.from({ length: levels }).reduce<unknown>((inner) => ({ inner }), 'x');
    expectProblem(await start('review-flow', { input: deep(25) }), 400, 'validation_failed');
    expectProblem(await start('review-flow', { input: 'x', parameters: { long: 'x'.repeat(5000) } }), 400, 'validation_failed');
    expectProblem(await start('nobody', { input: 'x' }), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/api/workflow-runs/not-a-uuid', { headers: acme }), 404, 'not_found');
    const { workflowRunId } = (await start('review-flow', { input: 'x' })).body;
    await untilStatus(workflowRunId, 'AwaitingApproval');
    expectProblem(
      await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${crypto.randomUUID()}`, {
        body: { answer: 'x' },
        headers: acme,
      }),
      404,
      'not_found',
    );
    const [request] = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: acme })).body;
    expectProblem(
      await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${request.id}`, { body: {}, headers: acme }),
      400,
      'validation_failed',
    );
    expectProblem(
      await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${request.id}`, {
        body: { answer: deep(40) },
        headers: acme,
      }),
      400,
      'validation_failed',
    );
  });
});

import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  parseSseFrames,
  spawnAllInOne,
  startHangar,
  startMockOpenAI,
  TEST_POSTGRES_URL,
  TEST_TOKEN,
  type AllInOneProcess,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Workflow runs across real process deaths: Hangar processes on one PostgreSQL are SIGKILLed after
 * a workflow run's first checkpoint, and a second process resumes it from where it stood, with no
 * finished step executed again (the mock upstream counts every model call).
 */

let mock: MockOpenAI;
let observer: HangarUnderTest;
const spawned: AllInOneProcess[] = [];

/** A Hangar process on the observer's schemas: its workflow worker polls every 200 ms and leases a run for 2 s. */
async function spawnWorker() {
  const process = await spawnAllInOne({
    env: {
      HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL,
      HANGAR__Stores__Postgres__SchemaName: observer.config.Stores.Postgres.SchemaName,
      HANGAR__Providers__mock__Kind: 'OpenAICompatible',
      HANGAR__Providers__mock__Endpoint: mock.url,
      HANGAR__Scheduling__PollInterval: '200ms',
      HANGAR__Scheduling__LeaseDuration: '2s',
    },
  });
  spawned.push(process);
  return process;
}

const workflowRun = async (id: string) => (await observer.request('GET', `/api/workflow-runs/${id}`)).body;
const untilStatus = (id: string, status: string, timeoutMs = 30_000) =>
  eventually(
    async () => {
      const run = await workflowRun(id);
      return run.status === status ? run : undefined;
    },
    `workflow run ${id} to be ${status}`,
    timeoutMs,
  );
const stepRuns = async (id: string) => {
  const tree = (await observer.request('GET', `/api/runs/${id}/tree`)).body;
  return (
    (tree.runs ?? tree) as Array<{ id: string; agentName: string; status: string; errorType: string | null; parentRunId: string | null }>
  )
    .filter((run) => run.parentRunId === id)
    .map((run) => [run.agentName, run.status, run.errorType]);
};
const eventTypes = async (id: string) => {
  const response = await fetch(`${observer.url}/api/runs/${id}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
  return parseSseFrames(await response.text()).map((frame) => frame.data.type as string);
};

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('draft-model', () => ({ text: 'a draft' }));
  mock.script('summary-model', () => ({ text: 'a summary' }));
  // Its first call hangs (its process is killed meanwhile); the resumed step gets an answer.
  mock.script('slow-model', [{ delayMs: 30_000, then: { text: 'never seen' } }, { text: 'checked' }]);
  observer = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    // The observer only reads and answers: its own worker must not race the processes under test for leases.
    overrides: { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } }, Scheduling: { RunWorker: false } },
  });
  for (const [name, model] of [
    ['drafter', 'draft-model'],
    ['summarizer', 'summary-model'],
    ['checker', 'slow-model'],
  ]) {
    const created = await observer.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model } } });
    expect(created.status, created.text).toBe(201);
  }
  const workflows = {
    // draft, then a fan-out to a human review and a summary: three steps, two super steps.
    reviewed: {
      steps: [
        { id: 'draft', kind: 'agent', agent: 'drafter' },
        { id: 'review', kind: 'input', prompt: 'Publish?' },
        { id: 'summary', kind: 'agent', agent: 'summarizer' },
      ],
      edges: [
        { from: 'draft', to: 'review' },
        { from: 'draft', to: 'summary' },
      ],
    },
    checked: {
      steps: [
        { id: 'draft', kind: 'agent', agent: 'drafter' },
        { id: 'check', kind: 'agent', agent: 'checker' },
        { id: 'report', kind: 'transform', template: '{{draft}} / {{check}}' },
      ],
      edges: [
        { from: 'draft', to: 'check' },
        { from: 'check', to: 'report' },
      ],
    },
  };
  for (const [name, body] of Object.entries(workflows)) {
    const stored = await observer.request('PUT', `/api/workflows/${name}`, { body });
    expect(stored.status, stored.text).toBe(201);
  }
});

afterAll(async () => {
  await Promise.all(spawned.map((process) => process.kill()));
  await observer?.stop();
  await mock?.close();
});

describe('workflow runs resumed after a SIGKILL', () => {
  it('a fan-out paused for a human: killed after the first checkpoint, a second process completes it, no step executed twice', async () => {
    const first = await spawnWorker();
    const started = await observer.request('POST', '/api/workflows/reviewed/run', { body: { input: 'the launch' } });
    expect(started.status, started.text).toBe(202);
    const { workflowRunId } = started.body;
    await untilStatus(workflowRunId, 'AwaitingApproval');
    const checkpoints = (await observer.request('GET', `/api/workflow-runs/${workflowRunId}/checkpoints`)).body;
    expect(checkpoints.map((checkpoint: { superStep: number }) => checkpoint.superStep)).toEqual([1]);
    await first.kill();

    const second = await spawnWorker();
    const [request] = (await observer.request('GET', `/api/workflow-runs/${workflowRunId}/requests`)).body;
    const answered = await fetch(`${second.url}/api/workflow-runs/${workflowRunId}/requests/${request.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ answer: 'ship it' }),
    });
    expect(answered.status).toBe(200);
    const completed = await untilStatus(workflowRunId, 'Completed');
    expect(completed.output).toEqual({ review: 'ship it', summary: 'a summary' });
    expect(mock.callsTo('draft-model')).toBe(1);
    expect(mock.callsTo('summary-model')).toBe(1);
    expect((await stepRuns(workflowRunId)).sort()).toEqual([
      ['drafter', 'Completed', null],
      ['summarizer', 'Completed', null],
    ]);
    const resumedCheckpoints = (await observer.request('GET', `/api/workflow-runs/${workflowRunId}/checkpoints`)).body;
    expect(resumedCheckpoints.map((checkpoint: { superStep: number }) => checkpoint.superStep)).toEqual([1, 2]);
    await second.stop();
  }, 90_000);

  it('killed mid-step while holding the run: the next process takes the lease over, ends the lost step run and runs only that step again', async () => {
    const drafts = mock.callsTo('draft-model');
    const first = await spawnWorker();
    const { workflowRunId } = (await observer.request('POST', '/api/workflows/checked/run', { body: { input: 'the plan' } })).body;
    // The check step's model call hangs: the run is held, past its first checkpoint.
    await eventually(async () => (mock.callsTo('slow-model') === 1 ? true : undefined), 'the check step to call its model');
    expect((await workflowRun(workflowRunId)).status).toBe('Running');
    expect((await observer.request('GET', `/api/workflow-runs/${workflowRunId}/checkpoints`)).body).toHaveLength(1);
    await first.kill();

    await spawnWorker();
    const completed = await untilStatus(workflowRunId, 'Completed');
    expect(completed.output).toBe('a draft / checked');
    expect(mock.callsTo('draft-model')).toBe(drafts + 1);
    expect(mock.callsTo('slow-model')).toBe(2);
    expect((await stepRuns(workflowRunId)).sort()).toEqual([
      ['checker', 'Completed', null],
      ['checker', 'Failed', 'interrupted'],
      ['drafter', 'Completed', null],
    ]);
    expect(await eventTypes(workflowRunId)).toContain('workflow.resumed');
  }, 90_000);
});

import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Online evaluation (OnlineEvaluation:*): a judge agent scores sampled completed runs within an hourly budget. */

const acme = { 'x-hangar-tenant': 'acme' };
const MAX_SCORES_PER_HOUR = 3;
let hangar: HangarUnderTest;
let mock: MockOpenAI;

const run = async (agent: string, message: string) => {
  const answer = await hangar.request('POST', `/api/agents/${agent}/run`, {
    body: { message },
    headers: { ...acme, 'idempotency-key': `${agent}-${message}-${Math.random()}` },
  });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.runId as string;
};
const summary = async () => (await hangar.request('GET', '/api/evals/online', { headers: acme })).body;
const evaluatorScores = async (runId: string) =>
  ((await hangar.request('GET', `/api/runs/${runId}/feedback`, { headers: acme })).body as Array<{ source: string }>).filter(
    (score) => score.source === 'Evaluator',
  );

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('assistant', () => ({ text: 'A mediocre answer.', usage: { prompt: 5, completion: 3 } }));
  mock.script('judge', () => ({ text: '{"score": 30, "reason": "vague"}' }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      OnlineEvaluation: {
        Enabled: true,
        SampleRate: 1,
        MaxScoresPerHour: MAX_SCORES_PER_HOUR,
        JudgeAgent: 'judge',
        MinSampleSize: 2,
        LowScoreThreshold: 60,
        AgentNames: ['assistant', 'judge'],
      },
    },
  });
  for (const name of ['assistant', 'judge', 'unlisted']) {
    const model = name === 'unlisted' ? 'assistant' : name;
    const created = await hangar.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model } }, headers: acme });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('online evaluation', () => {
  it('scores every sampled run at rate 1 until the hour’s budget is spent, on the run as source Evaluator', async () => {
    const outside = await run('unlisted', 'zero');
    const first = await run('assistant', 'one');
    const scored = await eventually(async () => {
      const scores = await evaluatorScores(first);
      return scores.length ? scores : undefined;
    }, 'the first run’s score', 20_000);
    expect(scored).toEqual([expect.objectContaining({ name: 'online', kind: 'Numeric', value: 30, comment: 'vague', source: 'Evaluator' })]);
    // Heard before the first (one log, in order): an agent outside AgentNames is not judged.
    expect(await evaluatorScores(outside)).toEqual([]);
    expect(mock.callsTo('judge')).toBe(1);
    const others = [];
    for (const message of ['two', 'three', 'four', 'five']) others.push(await run('assistant', message));
    const { agents } = await eventually(async () => {
      const now = await summary();
      return now.agents[0]?.samples === MAX_SCORES_PER_HOUR ? now : undefined;
    }, 'three scored runs', 20_000);
    expect(agents).toEqual([
      expect.objectContaining({ agentName: 'assistant', samples: MAX_SCORES_PER_HOUR, meanScore: 30, minScore: 30, low: true }),
    ]);
    // The budget is spent: the later runs stay unscored (the judge is asked no more).
    const judged = mock.callsTo('judge');
    await run('assistant', 'six');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(mock.callsTo('judge')).toBe(judged);
    const unscored = (await Promise.all(others.map(evaluatorScores))).filter((scores) => scores.length === 0);
    expect(unscored).toHaveLength(2);
  });

  it('never samples the judge’s own runs, and says how it is set', async () => {
    const now = await summary();
    expect(now).toMatchObject({ enabled: true, sampleRate: 1, judgeAgent: 'judge', lowScoreThreshold: 60, minSampleSize: 2 });
    expect(now.agents.map((agent: { agentName: string }) => agent.agentName)).toEqual(['assistant']);
    const judgeRuns = (await hangar.request('GET', '/api/runs?kind=Evaluation', { headers: acme })).body;
    expect(judgeRuns.length).toBeGreaterThan(0);
    expect(judgeRuns.every((judged: { agentName: string }) => judged.agentName === 'judge')).toBe(true);
  });
});

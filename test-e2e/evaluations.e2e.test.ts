import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI, type RecordedRequest } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Evaluations and experiments": eval suites run over agent versions against the mock upstream. */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
let hangar: HangarUnderTest;
let mock: MockOpenAI;

const lastUserText = (request: RecordedRequest) =>
  String([...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '');

/** What the student models answer: `student-v1` knows 7 of the 10 cases, `student-v2` all of them. */
const ANSWERS: Record<string, { right: string; wrong?: string }> = {
  'capital of France?': { right: 'Paris' },
  '2 + 2?': { right: '4' },
  'colour of the sky?': { right: 'Blue', wrong: 'green' },
  'Name a prime number.': { right: 'Seven is prime: 7' },
  'Say hello.': { right: 'Hello there, friend!' },
  'Give an order number.': { right: 'Your order is ORD-12345.', wrong: 'Your order is 12345.' },
  'Write a date.': { right: '2026-11-28' },
  'Give a user as JSON.': { right: '{"name":"Ada","age":36}' },
  'Give a product as JSON.': { right: '{"sku":"A1","price":9.5}', wrong: '{"sku":"A1","price":"cheap"}' },
  'Explain the capital of Italy.': { right: 'Rome is the capital of Italy.' },
};

const CASES = [
  { id: 'france', input: 'capital of France?', expected: 'Paris' },
  { id: 'sum', input: '2 + 2?', expected: '4', graders: [{ kind: 'exact' }] },
  { id: 'sky', input: 'colour of the sky?', expected: 'blue', graders: [{ kind: 'exact', ignoreCase: true }] },
  { id: 'prime', input: 'Name a prime number.', graders: [{ kind: 'contains', value: '7' }] },
  { id: 'hello', input: 'Say hello.', expected: 'hello', graders: [{ kind: 'contains', ignoreCase: true }] },
  { id: 'order', input: 'Give an order number.', graders: [{ kind: 'regex', pattern: 'ORD-\\d{5}' }] },
  { id: 'date', input: 'Write a date.', graders: [{ kind: 'regex', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }] },
  {
    id: 'user',
    input: 'Give a user as JSON.',
    graders: [{ kind: 'jsonSchema', schema: { type: 'object', required: ['name', 'age'], properties: { age: { type: 'integer' } } } }],
  },
  {
    id: 'product',
    input: 'Give a product as JSON.',
    graders: [{ kind: 'jsonSchema', schema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] } }],
  },
  {
    id: 'italy',
    input: 'Explain the capital of Italy.',
    graders: [{ kind: 'judge', agent: 'judge', rubric: 'Names Rome.', threshold: 70 }],
  },
];

const putSuite = (name: string, body: unknown, headers = acme) => hangar.request('PUT', `/api/evals/${name}`, { body, headers });
const startRun = (suite: string, body: unknown, headers = acme) => hangar.request('POST', `/api/evals/${suite}/runs`, { body, headers });

async function completed(runId: string) {
  const run = await eventually(
    async () => {
      const answer = await hangar.request('GET', `/api/eval-runs/${runId}`, { headers: acme });
      expect(answer.status, answer.text).toBe(200);
      return ['Completed', 'Failed'].includes(answer.body.status) ? answer.body : undefined;
    },
    `suite run ${runId} to end`,
    30_000,
  );
  expect(run.status, run.error).toBe('Completed');
  return run;
}

beforeAll(async () => {
  mock = await startMockOpenAI();
  const student = (knows: 'all' | 'most') => (request: RecordedRequest) => {
    const answer = ANSWERS[lastUserText(request)];
    return { text: (knows === 'most' && answer?.wrong) || answer?.right || 'no idea', usage: { prompt: 12, completion: 4 } };
  };
  mock.script('student-v1', student('most'));
  mock.script('student-v2', student('all'));
  // The judge scores from the answer in its prompt: 95 when it names Rome.
  mock.script('judge', (request) => ({
    text: /Answer: .*Rome/.test(lastUserText(request)) ? '{"score": 95, "reason": "names Rome"}' : '{"score": 10, "reason": "wrong city"}',
    usage: { prompt: 40, completion: 10 },
  }));
  mock.script('mute-judge', () => ({ text: 'I would rather not say.' }));
  // A student who never finishes an answer: only a cancel ends its cases.
  mock.script('dawdler', () => ({ delayMs: 60_000, then: { text: 'too late' } }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Pricing: {
        Currency: 'EUR',
        mock: { 'student-v1': { Input: 1, Output: 2 }, 'student-v2': { Input: 1, Output: 2 }, judge: { Input: 1, Output: 2 } },
      },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
    },
  });
  for (const [name, model] of [
    ['student', 'student-v1'],
    ['judge', 'judge'],
    ['mute-judge', 'mute-judge'],
    ['dawdler', 'dawdler'],
  ]) {
    const created = await hangar.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model } }, headers: acme });
    expect(created.status, created.text).toBe(201);
  }
  const updated = await hangar.request('PUT', '/api/agents/student', {
    body: { name: 'student', model: { provider: 'mock', model: 'student-v2' } },
    headers: acme,
  });
  expect(updated.status, updated.text).toBe(200);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('eval suites', () => {
  it('creates a suite (201) with ids and default graders settled, replaces it as version 2 (200), lists, reads and deletes it', async () => {
    const created = await putSuite('smoke', { description: 'first', cases: [{ input: 'capital of France?', expected: 'Paris' }] });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'smoke',
      version: 1,
      cases: [{ id: 'case-1', input: 'capital of France?', expected: 'Paris', parameters: {}, graders: [{ kind: 'exact' }] }],
    });
    const replaced = await putSuite('smoke', { cases: [{ input: 'a', graders: [{ kind: 'regex', pattern: 'a', flags: 'i' }] }] });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({
      version: 2,
      description: '',
      cases: [{ graders: [{ kind: 'regex', pattern: 'a', flags: 'i' }] }],
    });
    const listed = await hangar.request('GET', '/api/evals', { headers: acme });
    expect(listed.body).toEqual([expect.objectContaining({ name: 'smoke', version: 2 })]);
    expect(listed.body[0].cases).toBeUndefined();
    expect((await hangar.request('GET', '/api/evals/smoke', { headers: globex })).status).toBe(404);
    expect((await hangar.request('DELETE', '/api/evals/smoke', { headers: globex })).status).toBe(404);
    expect((await hangar.request('DELETE', '/api/evals/smoke', { headers: acme })).status).toBe(204);
    expect((await hangar.request('GET', '/api/evals/smoke', { headers: acme })).status).toBe(404);
  });

  it('refuses an invalid suite with every reason and stores nothing', async () => {
    const refused = await putSuite('broken', {
      cases: [
        { id: 'x', input: 'a', graders: [{ kind: 'regex', pattern: '(' }] },
        { id: 'x', input: 'b', graders: [{ kind: 'jsonSchema', schema: { type: 'no-such-type' } }] },
        { input: 'c' },
        { input: 'd', graders: [{ kind: 'exact' }] },
      ],
    });
    expectProblem(refused, 400, 'validation_failed');
    const paths = refused.body.errors.map((error: { path: string }) => error.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'cases[0].graders[0].pattern',
        'cases[1].id',
        'cases[1].graders[0].schema',
        'cases[2].graders',
        'cases[3].graders[0].value',
      ]),
    );
    expectProblem(await putSuite('online', { cases: [{ input: 'a', expected: 'a' }] }), 400, 'validation_failed');
    expectProblem(await putSuite('kinds', { cases: [{ input: 'a', graders: [{ kind: 'vibes' }] }] }), 400, 'validation_failed');
    expectProblem(await putSuite('empty', { cases: [] }), 400, 'validation_failed');
    expect((await hangar.request('GET', '/api/evals', { headers: acme })).body.map((suite: { name: string }) => suite.name)).not.toContain(
      'broken',
    );
  });

  it('runs ten cases over a pinned agent version: pass rate, grades, runs of kind Evaluation, cost and latency', async () => {
    expect((await putSuite('regression', { cases: CASES })).status).toBe(201);
    const started = await startRun('regression', { agentName: 'student', agentVersion: 1 });
    expect(started.status, started.text).toBe(202);
    expect(started.headers.get('location')).toBe(`/api/eval-runs/${started.body.id}`);
    expect(Object.keys(started.body)).toEqual(['id']);
    const run = await completed(started.body.id);
    expect(run).toMatchObject({ suite: 'regression', suiteVersion: 1, agentName: 'student', agentVersion: 1 });
    expect(run.summary).toMatchObject({ cases: 10, passed: 7, failed: 3, errored: 0, passRate: 0.7 });
    expect(run.summary.cost).toBeGreaterThan(0);
    expect(run.summary.latencyMsP50).toBeGreaterThan(0);
    expect(run.casesDone).toBe(10);
    const failed = run.results
      .filter((result: { status: string }) => result.status === 'Failed')
      .map((result: { caseId: string }) => result.caseId);
    expect(failed.sort()).toEqual(['order', 'product', 'sky']);
    const product = run.results.find((result: { caseId: string }) => result.caseId === 'product');
    expect(product).toMatchObject({ passed: false, graders: [{ kind: 'jsonSchema', passed: false }] });
    expect(product.graders[0].detail).toContain('/price');
    const italy = run.results.find((result: { caseId: string }) => result.caseId === 'italy');
    expect(italy).toMatchObject({
      passed: true,
      status: 'Passed',
      score: 0.95,
      graders: [{ kind: 'judge', passed: true, detail: 'names Rome' }],
    });
    // The judge's run is priced apart from the case's own.
    expect(italy.judgeCost).toBeGreaterThan(0);
    expect(run.results.find((result: { caseId: string }) => result.caseId === 'france').judgeCost).toBeNull();
    expect(run.summary.judgeCost).toBeCloseTo(italy.judgeCost);
    const caseRun = await hangar.request('GET', `/api/runs/${italy.runId}`, { headers: acme });
    expect(caseRun.body).toMatchObject({ kind: 'Evaluation', agentVersion: 1, status: 'Completed' });
    expect((await hangar.request('GET', `/api/eval-runs/${started.body.id}`, { headers: globex })).status).toBe(404);
  });

  it('compares the runs of two versions case by case', async () => {
    const base = (await startRun('regression', { agentName: 'student', agentVersion: 1 })).body.id;
    const head = (await startRun('regression', { agentName: 'student' })).body.id;
    await completed(base);
    const current = await completed(head);
    expect(current).toMatchObject({ agentVersion: 2, summary: { passed: 10, passRate: 1 } });
    const compared = await hangar.request('GET', `/api/evals/regression/compare?base=${base}&head=${head}`, { headers: acme });
    expect(compared.status, compared.text).toBe(200);
    expect(compared.body.delta.passRate).toBeCloseTo(0.3);
    const changes = Object.fromEntries(
      compared.body.cases.map((entry: { caseId: string; change: string }) => [entry.caseId, entry.change]),
    );
    expect(changes).toMatchObject({ sky: 'Improved', order: 'Improved', product: 'Improved', france: 'Unchanged' });
    const listed = await hangar.request('GET', '/api/evals/regression/runs', { headers: acme });
    expect(listed.body.map((run: { id: string }) => run.id).slice(0, 2)).toEqual([head, base]);
    expectProblem(await hangar.request('GET', `/api/evals/regression/compare?base=${base}&head=nope`, { headers: acme }), 404, 'not_found');
  });

  it('refuses a run of an unknown agent, version or judge, queueing nothing', async () => {
    expectProblem(await startRun('regression', { agentName: 'nobody' }), 404, 'not_found');
    expectProblem(await startRun('regression', { agentName: 'student', agentVersion: 9 }), 404, 'not_found');
    expectProblem(await startRun('nothing-here', { agentName: 'student' }), 404, 'not_found');
    expect((await putSuite('judged', { cases: [{ input: 'a', graders: [{ kind: 'judge', agent: 'ghost' }] }] })).status).toBe(201);
    const refused = await startRun('judged', { agentName: 'student' });
    expectProblem(refused, 400, 'validation_failed');
    expect(refused.body.errors[0].message).toContain('ghost');
    expect((await hangar.request('GET', '/api/evals/judged/runs', { headers: acme })).body).toEqual([]);
  });

  it('records a case whose judge gives no score as an error, not a failure', async () => {
    const cases = [{ id: 'mute', input: 'Explain the capital of Italy.', graders: [{ kind: 'judge', agent: 'mute-judge' }] }];
    expect((await putSuite('mute', { cases })).status).toBe(201);
    const run = await completed((await startRun('mute', { agentName: 'student' })).body.id);
    expect(run.summary).toMatchObject({ cases: 1, failed: 1, errored: 1, passRate: 0 });
    expect(run.results[0]).toMatchObject({ status: 'Error', output: 'Rome is the capital of Italy.' });
    expect(run.results[0].error).toContain('gave no score');
  });

  it('cancels a running suite run: its case runs are canceled, no case starts after, and the summary is of the cases done', async () => {
    const cases = Array.from({ length: 6 }, (_, index) => ({ input: `question ${index + 1}`, expected: 'an answer' }));
    expect((await putSuite('slow', { cases })).status).toBe(201);
    const { id } = (await startRun('slow', { agentName: 'dawdler' })).body;
    const asked = () => mock.requests.filter((request) => request.model === 'dawdler').length;
    // Four cases at a time: four case runs wait on the model.
    await eventually(() => (asked() === 4 ? true : undefined), 'four cases under way', 30_000);
    const cancel = (runId: string, headers = acme) => hangar.request('POST', `/api/eval-runs/${runId}/cancel`, { headers });
    expectProblem(await cancel(id, globex), 404, 'not_found');

    const canceled = await cancel(id);
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body).toMatchObject({
      id,
      status: 'Canceled',
      casesDone: 0,
      summary: { cases: 6, passed: 0 },
      completedAt: expect.any(String),
    });
    const caseRuns = async () => (await hangar.request('GET', '/api/runs?agentName=dawdler&kind=Evaluation', { headers: acme })).body;
    await eventually(async () => {
      const runs = await caseRuns();
      return runs.length === 4 && runs.every((run: any) => run.status === 'Canceled') ? true : undefined;
    }, 'the case runs canceled');
    // Again: the same answer. Nothing more was asked of the model, and no result was kept.
    expect((await cancel(id)).body).toMatchObject({ status: 'Canceled' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(asked()).toBe(4);
    const after = (await hangar.request('GET', `/api/eval-runs/${id}`, { headers: acme })).body;
    expect(after).toMatchObject({ status: 'Canceled', casesDone: 0, results: [] });

    const done = await completed((await startRun('mute', { agentName: 'student' })).body.id);
    expectProblem(await cancel(done.id), 409, 'conflict');
  });
});

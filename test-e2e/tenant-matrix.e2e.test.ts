import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, type HangarUnderTest } from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The tenant matrix: tenant B, holding every role and scope, against every route of the OpenAPI
 * document with tenant A's identifiers in its path. B never sees anything of A's (no answer carries
 * A's ids or content) and never changes anything of A's (A's records read the same afterwards);
 * a route that addresses one of A's records answers B 404, and the tenant routes answer 403.
 */
let hangar: HangarUnderTest;
let document: { paths: Record<string, Record<string, { operationId: string; 'x-hangar-scope'?: string }>> };
const A = { 'x-hangar-tenant': 'tenant-a' };
/** Tenant B's own credential: an API key of tenant B holding the Admin role and every scope. */
let bKey: string;
const MARKER = 'only-tenant-a-knows-this';

/** A's records, by the path parameter that names them. */
const ofA: Record<string, string> = {};

async function as(headers: Record<string, string>, method: string, path: string, body?: unknown) {
  return hangar.request(method, path, { headers, ...(body !== undefined && { body }) });
}

const asB = (method: string, path: string, body?: unknown) =>
  hangar.request(method, path, { token: bKey, ...(body !== undefined && { body }) });

beforeAll(async () => {
  hangar = await startHangar({ modules: allInOneModules(), overrides: { Tenancy: { Enabled: true, AllowHeaderResolution: true } } });
  document = (await hangar.request('GET', '/api/openapi.json')).body;
  const created = [
    await as(A, 'POST', '/api/agents', { name: 'agent-a', instructions: MARKER, model: { provider: 'demo', model: 'echo' } }),
    await as(A, 'PUT', '/api/agents/agent-a', {
      name: 'agent-a',
      instructions: `${MARKER} v2`,
      model: { provider: 'demo', model: 'echo' },
    }),
    await as(A, 'PUT', '/api/skills/skill-a', { name: 'skill-a', description: MARKER, instructions: MARKER }),
    await as(A, 'PUT', '/api/quotas/quota-a', { metric: 'Runs', period: 'Day', limit: 1000 }),
    // Named like A's agent, so every `{name}` route of webhooks names a record of A's.
    await as(A, 'PUT', '/api/webhooks/agent-a', {
      url: 'https://hooks.example.com/a',
      events: ['agent.created'],
      secretKey: 'Hangar:WebhookSecrets:a',
      description: MARKER,
    }),
    await as(A, 'PUT', '/api/schedules/agent-a', {
      handlerKey: 'agent-run',
      cron: '0 0 1 1 *',
      payload: { agentName: 'agent-a', message: MARKER },
      enabled: false,
    }),
    await as(A, 'PUT', '/api/knowledge/collection-a', { description: MARKER, embeddingProvider: 'demo', embeddingModel: 'hash' }),
  ];
  for (const answer of created) expect(answer.status, answer.text).toBeLessThan(300);
  const knowledgeDocument = await as(A, 'POST', '/api/knowledge/collection-a/documents', { name: 'a.md', text: `# ${MARKER}` });
  expect(knowledgeDocument.status, knowledgeDocument.text).toBe(201);
  const run = await hangar.request('POST', '/api/agents/agent-a/run', {
    headers: { ...A, 'idempotency-key': 'matrix-run' },
    body: { message: MARKER, sessionId: 'session-a' },
  });
  expect(run.status, run.text).toBe(200);
  const feedback = await as(A, 'POST', `/api/runs/${run.body.runId}/feedback`, { name: 'quality', value: 1, comment: MARKER });
  const key = await as(A, 'POST', '/api/api-keys', { name: 'key-a', role: 'Reader' });
  const form = new FormData();
  form.append('file', new Blob([MARKER], { type: 'text/plain' }), 'a.txt');
  const attachment = await hangar.request('POST', '/api/attachments?sessionId=session-a', { headers: A, rawBody: form as never });
  for (const answer of [feedback, key, attachment]) expect(answer.status, answer.text).toBeLessThan(300);
  const suite = await as(A, 'PUT', '/api/evals/suite-a', { description: MARKER, cases: [{ input: MARKER, expected: MARKER }] });
  expect(suite.status, suite.text).toBe(201);
  const evalRun = await as(A, 'POST', '/api/evals/suite-a/runs', { agentName: 'agent-a' });
  expect(evalRun.status, evalRun.text).toBe(202);
  const experiment = await as(A, 'PUT', '/api/experiments/experiment-a', {
    agentName: 'agent-a',
    variants: [
      { version: 1, weight: 1 },
      { version: 2, weight: 1 },
    ],
  });
  expect(experiment.status, experiment.text).toBe(201);
  // Named like A's agent; its run waits for A's answer (a pending request) through B's requests.
  const workflow = await as(A, 'PUT', '/api/workflows/agent-a', {
    description: MARKER,
    steps: [
      { id: 'draft', kind: 'agent', agent: 'agent-a' },
      { id: 'ask', kind: 'input', prompt: MARKER },
    ],
    edges: [{ from: 'draft', to: 'ask' }],
  });
  expect(workflow.status, workflow.text).toBe(201);
  const workflowRun = await as(A, 'POST', '/api/workflows/agent-a/run', { input: MARKER });
  expect(workflowRun.status, workflowRun.text).toBe(202);
  const workflowRequest = await eventually(async () => {
    const [pending] = (await as(A, 'GET', `/api/workflow-runs/${workflowRun.body.workflowRunId}/requests`)).body;
    return pending;
  }, 'the workflow run of tenant A to ask');
  // Ended before the snapshot, which must not move by itself.
  await eventually(
    async () => ((await as(A, 'GET', `/api/eval-runs/${evalRun.body.id}`)).body.status === 'Completed' ? true : undefined),
    'the eval suite run of tenant A',
    20_000,
  );
  const keyOfB = await hangar.request('POST', '/api/api-keys', {
    headers: { 'x-hangar-tenant': 'tenant-b' },
    body: { name: 'b', role: 'Admin' },
  });
  expect(keyOfB.status, keyOfB.text).toBe(201);
  bKey = keyOfB.body.key;
  Object.assign(ofA, {
    name: 'agent-a',
    runId: run.body.runId,
    sessionId: 'session-a',
    scoreId: feedback.body.id,
    id: attachment.body.id,
    apiKeyId: key.body.id,
    skillName: 'skill-a',
    collection: 'collection-a',
    documentId: knowledgeDocument.body.id,
    suite: 'suite-a',
    evalRunId: evalRun.body.id,
    workflowRunId: workflowRun.body.workflowRunId,
    requestId: workflowRequest.id,
    a: '1',
    b: '2',
  });
});

afterAll(async () => {
  await hangar?.stop();
});

/** What A sees of its own records: must be the same before and after B's requests. */
async function snapshotOfA() {
  const paths = [
    '/api/agents/agent-a',
    '/api/agents/agent-a/versions',
    `/api/runs/${ofA.runId}`,
    `/api/runs/${ofA.runId}/feedback`,
    '/api/sessions/session-a',
    `/api/attachments?sessionId=session-a`,
    '/api/skills/skill-a',
    '/api/quotas',
    `/api/api-keys/${ofA.apiKeyId}`,
    '/api/webhooks/agent-a',
    '/api/webhooks/agent-a/deliveries',
    '/api/schedules/agent-a',
    '/api/knowledge/collection-a',
    '/api/knowledge/collection-a/documents',
    '/api/evals/suite-a',
    '/api/experiments/experiment-a',
    `/api/eval-runs/${ofA.evalRunId}`,
    '/api/workflows/agent-a',
    `/api/workflow-runs/${ofA.workflowRunId}`,
    `/api/workflow-runs/${ofA.workflowRunId}/requests`,
    `/api/workflow-runs/${ofA.workflowRunId}/checkpoints`,
  ];
  const answers = await Promise.all(paths.map((path) => as(A, 'GET', path)));
  answers.forEach((answer, index) => expect(answer.status, `${paths[index]}: ${answer.text}`).toBe(200));
  // `used` and `lastUsedAt` may move by themselves; everything else stands still.
  return answers.map((answer) => answer.text.replace(/"(used|lastUsedAt|windowStart|resetsAt|updatedAt)":[^,}]*/g, ''));
}

/** The path parameter values that name A's records on this route. */
function pathFor(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, param: string) => {
    if (param === 'name' && path.startsWith('/api/skills')) return 'skill-a';
    if (param === 'name' && path.startsWith('/api/quotas')) return 'quota-a';
    if (param === 'id' && path.startsWith('/api/api-keys')) return ofA.apiKeyId;
    if (param === 'id' && path.startsWith('/api/tenants')) return 'tenant-a';
    if (param === 'id' && path.startsWith('/api/knowledge')) return ofA.documentId;
    if (param === 'id' && path.startsWith('/api/eval-runs')) return ofA.evalRunId;
    if (param === 'id' && path.startsWith('/api/workflow-runs')) return ofA.workflowRunId;
    if (param === 'name' && path.startsWith('/api/experiments')) return 'experiment-a';
    if (param === 'approvalId') return '00000000-0000-4000-8000-000000000001';
    return ofA[param] ?? `unknown-${param}`;
  });
}

/** A valid body for each write, so the request reaches the tenant's records rather than failing validation. */
const BODIES: Record<string, unknown> = {
  putAgent: { name: 'agent-a', instructions: 'overwritten by B', model: { provider: 'demo', model: 'echo' } },
  rollbackAgent: { version: 1 },
  runAgent: { message: 'hi' },
  estimateRun: { message: 'hi' },
  branchSession: { upToSequence: 0 },
  saveFeedback: { name: 'quality', value: 0, comment: 'overwritten by B' },
  decideApproval: { approved: true },
  putSkill: { name: 'skill-a', description: 'overwritten by B' },
  putQuotaRule: { metric: 'Runs', period: 'Day', limit: 1 },
  putTenant: { displayName: 'taken by B', enabled: false },
  putWebhook: { url: 'https://hooks.example.com/b', events: ['agent.created'], secretKey: 'Hangar:WebhookSecrets:b' },
  putRetentionPolicy: { maxAge: '1.00:00:00' },
  putKnowledgeCollection: { embeddingProvider: 'demo', embeddingModel: 'hash' },
  addKnowledgeDocument: { name: 'b.md', text: 'by B' },
  searchKnowledge: { query: 'only tenant a knows this' },
  putEvalSuite: { cases: [{ input: 'by B', expected: 'by B' }] },
  startEvalSuiteRun: { agentName: 'agent-a' },
  putExperiment: {
    agentName: 'agent-a',
    variants: [
      { version: 1, weight: 1 },
      { version: 2, weight: 1 },
    ],
  },
  putWorkflow: { steps: [{ id: 'b', kind: 'transform', template: 'by B' }], edges: [] },
  runWorkflow: { input: 'by B' },
  answerWorkflowRequest: { answer: 'by B' },
  putSchedule: { handlerKey: 'agent-run', cron: '0 0 1 1 *', payload: { agentName: 'agent-a', message: 'by B' }, enabled: false },
};

it('lets tenant B neither see nor change any of tenant A’s records through any route', async () => {
  const before = await snapshotOfA();
  const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );
  expect(routes.length).toBeGreaterThan(50);
  const problems: string[] = [];
  // Names B gave records of its own (agents, skills, quota rules, webhooks, schedules, knowledge collections, workflows … are named per tenant): B may use them.
  const ownedByB = new Set<string>();
  for (const { method, path, operation } of routes) {
    const concrete = pathFor(path);
    const body = BODIES[operation.operationId] ?? (method === 'POST' || method === 'PUT' ? {} : undefined);
    const answer = await asB(method, concrete, body);
    // What B named in its request may come back (a 404 names it); nothing else of A's may.
    const leaked = [
      MARKER,
      ofA.runId,
      ofA.scoreId,
      ofA.id,
      ofA.apiKeyId,
      ofA.documentId,
      ofA.evalRunId,
      ofA.workflowRunId,
      ofA.requestId,
      'session-a',
      'quota-a',
      'agent-a',
      'skill-a',
    ].filter((secret) => answer.text.includes(secret) && !concrete.includes(secret) && !JSON.stringify(body ?? '').includes(secret));
    if (leaked.length) problems.push(`${method} ${path}: answer carries ${leaked.join(', ')}`);
    if (answer.status >= 500) problems.push(`${method} ${path}: ${answer.status}`);
    const namedPerTenant = [
      'putAgent',
      'putSkill',
      'putQuotaRule',
      'putWebhook',
      'putSchedule',
      'putKnowledgeCollection',
      'putEvalSuite',
      'putExperiment',
      'putWorkflow',
    ];
    if (namedPerTenant.includes(operation.operationId) && answer.status === 201) ownedByB.add(concrete);
    const namesRecordOfA = /\{\w+\}/.test(path) && ![...ownedByB].some((owned) => concrete.startsWith(owned));
    // Platform-wide settings answer an ordinary tenant 403 whatever it names.
    const expected = path.startsWith('/api/tenants') || path.startsWith('/api/retention') ? 403 : 404;
    if (namesRecordOfA && answer.status < 400) problems.push(`${method} ${path}: ${answer.status} for tenant A's record`);
    // 400 (a body this route does not take), 409 (a feature switched off) and 426 (a WebSocket route asked
    // without the handshake; its tenancy is voice-conversations.e2e's) also leave A's records alone.
    else if (namesRecordOfA && ![expected, 400, 409, 426].includes(answer.status))
      problems.push(`${method} ${path}: ${answer.status}, expected ${expected}`);
  }
  expect(problems).toEqual([]);
  expect(await snapshotOfA()).toEqual(before);
});

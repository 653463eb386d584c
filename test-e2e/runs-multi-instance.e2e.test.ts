import { randomBytes, randomUUID } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  parseSseFrames,
  startHangar,
  startMockOpenAI,
  TEST_REDIS_URL,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Two Hangar instances sharing one PostgreSQL and one Redis, as two replicas behind a load
 * balancer: a run executes on `first`, and `second` is asked about it.
 */

let mock: MockOpenAI;
let first: HangarUnderTest;
let second: HangarUnderTest;

const runningRun = (target: HangarUnderTest, agentName: string) =>
  eventually(async () => {
    const runs = (await target.request('GET', `/api/runs?agentName=${agentName}&status=Running&includeChildren=true`)).body;
    return runs[0] as any;
  }, `a running ${agentName} run`);

/** Starts a streamed run and resolves with its SSE frames once the stream ends. */
async function streamRun(target: HangarUnderTest, agentName: string, message: string) {
  const response = await fetch(`${target.url}/api/agents/${agentName}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  return parseSseFrames(await response.text());
}

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('hanging', [{ delayMs: 20_000, then: { text: 'never seen' } }]);
  mock.script('slow', [{ delayMs: 500, then: { text: 'slow answer' } }]);
  // Asks for the clock, then repeats what the tool call came back with.
  mock.script('asks-for-clock', (request) => {
    const result = request.messages.find((message) => message.role === 'tool');
    return result ? { text: `tool said ${JSON.stringify(result.content)}` } : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } };
  });
  mock.script('delegator', (request) => {
    if (request.messages.some((message) => message.role === 'tool')) return { text: 'relayed' };
    const agentTool = request.tools?.find((entry) => entry.function.name.startsWith('call_'));
    return agentTool ? { toolCall: { name: agentTool.function.name, args: { message: 'go' } } } : { text: 'leaf' };
  });
  const shared = {
    Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
    Redis: { ConnectionString: TEST_REDIS_URL, ChannelPrefix: `t_${randomBytes(5).toString('hex')}:` },
    // The default: on a loaded machine the executing instance's answer over Redis took longer than 500 ms.
    Hangar: { Runs: { CancelReplyTimeout: '2s' } },
    Approvals: { RequiredTools: ['clock'], DefaultExpiration: '5s', ScanInterval: '200ms' },
    // No job worker, so a queued run stays queued until it is canceled.
    Scheduling: { RunWorker: false },
  };
  first = await startHangar({ engine: 'postgres', modules: allInOneModules(), overrides: shared });
  const schemaName = first.config.Stores.Postgres.SchemaName;
  second = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    overrides: { ...shared, Stores: { Postgres: { SchemaName: schemaName } } },
  });
  for (const [name, model, agents] of [
    ['sleeper', 'hanging', []],
    ['boss', 'delegator', ['sleeper']],
    ['slowpoke', 'slow', []],
    ['guarded', 'asks-for-clock', []],
  ] as const) {
    const tools = name === 'guarded' ? ['clock'] : [];
    const created = await first.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model }, agents, tools } });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await mock?.close();
});

describe('runs across instances', () => {
  it('reports Redis as the pub/sub store', async () => {
    expect((await second.request('GET', '/api/meta', { token: null })).body.stores.cache).toBe('redis');
  });

  it('cancels a run executing on another instance: 202 there, the stream here ends Canceled', async () => {
    const streaming = streamRun(first, 'sleeper', 'take your time');
    const run = await runningRun(second, 'sleeper');
    const canceled = await second.request('POST', `/api/runs/${run.id}/cancel`);
    expect(canceled.status, canceled.text).toBe(202);
    expect(canceled.body.id).toBe(run.id);
    expect((await streaming).at(-1)).toMatchObject({ event: 'done', data: { status: 'Canceled' } });
    expect((await second.request('GET', `/api/runs/${run.id}`)).body.status).toBe('Canceled');
    expectProblem(await second.request('POST', `/api/runs/${run.id}/cancel`), 409, 'conflict');
  });

  it('a child canceled from another instance stops alone; a root canceled from there takes its tree', async () => {
    const keepsRoot = streamRun(first, 'boss', 'delegate');
    const child = await runningRun(second, 'sleeper');
    expect((await second.request('POST', `/api/runs/${child.id}/cancel`)).status).toBe(202);
    expect((await keepsRoot).at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    expect((await first.request('GET', `/api/runs/${child.id}`)).body.status).toBe('Canceled');

    const losesTree = streamRun(first, 'boss', 'delegate again');
    const secondChild = await runningRun(second, 'sleeper');
    expect((await second.request('POST', `/api/runs/${secondChild.rootRunId}/cancel`)).status).toBe(202);
    expect((await losesTree).at(-1)).toMatchObject({ event: 'done', data: { status: 'Canceled' } });
    expect((await first.request('GET', `/api/runs/${secondChild.id}`)).body.status).toBe('Canceled');
  });

  it('is 409 for a run no live instance executes (its process died), after waiting for an answer', async () => {
    const streaming = streamRun(first, 'sleeper', 'soon orphaned');
    const run = await runningRun(second, 'sleeper');
    // Canceling on `first` directly, then asking `second` about a run nobody runs any more.
    expect((await first.request('POST', `/api/runs/${run.id}/cancel`)).status).toBe(202);
    await streaming;
    expectProblem(await second.request('POST', `/api/runs/${run.id}/cancel`), 409, 'conflict');
    expectProblem(await second.request('POST', `/api/runs/${randomUUID()}/cancel`), 404, 'not_found');
  });

  it('cancels a queued run before any worker leases it', async () => {
    const queued = await second.request('POST', '/api/agents/slowpoke/run', {
      body: { message: 'later' },
      headers: { prefer: 'respond-async' },
    });
    expect(queued.status, queued.text).toBe(202);
    const runId = queued.body.id ?? queued.body.runId;
    const canceled = await first.request('POST', `/api/runs/${runId}/cancel`);
    expect(canceled.status, canceled.text).toBe(202);
    expect(canceled.body.status).toBe('Canceled');
    const events = await fetch(`${second.url}/api/runs/${runId}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    expect(parseSseFrames(await events.text()).map((frame) => frame.event)).toEqual(['run.canceled']);
    expectProblem(await second.request('POST', `/api/runs/${runId}/cancel`), 409, 'conflict');
  });

  it('tails the events of a run executing on another instance live', async () => {
    const streaming = streamRun(first, 'slowpoke', 'hello');
    const run = await runningRun(second, 'slowpoke');
    const events = await fetch(`${second.url}/api/runs/${run.id}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    const names = parseSseFrames(await events.text()).map((frame) => frame.event);
    expect(names[0]).toBe('run.started');
    expect(names.at(-1)).toBe('run.completed');
    expect((await streaming).at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
  });
});

describe('approvals across instances', () => {
  const awaiting = (target: HangarUnderTest) =>
    eventually(async () => {
      const runs = (await target.request('GET', '/api/runs?agentName=guarded&status=AwaitingApproval')).body;
      if (!runs.length) return undefined;
      const approvals = (await target.request('GET', `/api/runs/${runs[0].id}/approvals`)).body;
      const pending = approvals.find((approval: any) => approval.status === 'Pending');
      return pending ? { run: runs[0], approval: pending } : undefined;
    }, 'a run awaiting approval');
  const decide = (target: HangarUnderTest, runId: string, approvalId: string, body: unknown) =>
    target.request('POST', `/api/runs/${runId}/approvals/${approvalId}`, { body });

  it('pauses a run at a tool call that needs approval; a decision on another instance lets it go on', async () => {
    const streaming = streamRun(first, 'guarded', 'what time is it?');
    const { run, approval } = await awaiting(second);
    expect(approval).toMatchObject({ toolName: 'clock', args: { timeZone: 'UTC' }, status: 'Pending', decidedBy: null });
    expectProblem(await decide(second, run.id, approval.id, { approved: 'yes' }), 400, 'validation_failed');
    expectProblem(await decide(second, run.id, randomUUID(), { approved: true }), 404, 'not_found');

    const decided = await decide(second, run.id, approval.id, { approved: true, comment: 'fine' });
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body).toMatchObject({ status: 'Approved', decidedBy: 'auth-token', comment: 'fine', decidedAt: expect.any(String) });
    expectProblem(await decide(second, run.id, approval.id, { approved: false }), 409, 'conflict');

    const frames = await streaming;
    const approvalsFrame = frames.find((frame) => frame.event === 'approvals');
    expect(approvalsFrame?.data).toEqual({ approvals: [{ id: approval.id, toolName: 'clock', args: { timeZone: 'UTC' } }] });
    const toolResult = frames.find((frame) => frame.event === 'update' && frame.data.type === 'tool-result');
    expect(toolResult?.data.result).toMatchObject({ timeZone: 'UTC', utc: expect.any(String) });
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    const events = await fetch(`${second.url}/api/runs/${run.id}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    const names = parseSseFrames(await events.text()).map((frame) => frame.event);
    expect(names).toEqual(expect.arrayContaining(['approval.requested', 'approval.decided']));
    expect(names.indexOf('approval.requested')).toBeLessThan(names.indexOf('approval.decided'));
    const audit = (await second.request('GET', `/api/audit?resourceId=${approval.id}`)).body;
    expect(audit.map((entry: any) => entry.action)).toEqual(['approval.approved']);
  });

  it('tells the model when a person denied the call, and when nobody decided in time', async () => {
    const denied = streamRun(first, 'guarded', 'time please');
    const pending = await awaiting(second);
    await decide(second, pending.run.id, pending.approval.id, { approved: false, comment: 'not today' });
    const deniedFrames = await denied;
    expect(deniedFrames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    expect(deniedFrames.at(-1)!.data.output.text).toContain('denied this tool call: not today');

    const ignored = streamRun(first, 'guarded', 'time, eventually');
    const late = await awaiting(second);
    const ignoredFrames = await ignored; // Approvals:DefaultExpiration is 5 s in this suite
    expect(ignoredFrames.at(-1)!.data.output.text).toContain('expired');
    expect((await second.request('GET', `/api/runs/${late.run.id}/approvals`)).body[0]).toMatchObject({ status: 'Expired' });
  });

  it('cancels a run that waits for approval', async () => {
    const waiting = streamRun(first, 'guarded', 'never mind');
    const { run } = await awaiting(second);
    expect((await second.request('POST', `/api/runs/${run.id}/cancel`)).status).toBe(202);
    expect((await waiting).at(-1)).toMatchObject({ event: 'done', data: { status: 'Canceled' } });
  });
});

describe('what an instance keeps of agents and quota rules, when another changes them', () => {
  const runOn = async (target: HangarUnderTest, agentName: string) =>
    target.request('POST', `/api/agents/${agentName}/run`, { body: { message: 'hi' }, headers: { 'idempotency-key': randomUUID() } });

  it('runs the version another instance just stored, and not a deleted agent', async () => {
    const model = { provider: 'mock', model: 'quick' };
    expect((await first.request('POST', '/api/agents', { body: { name: 'versioned', model } })).status).toBe(201);
    const before = await runOn(second, 'versioned');
    expect(before.status, before.text).toBe(200);
    expect((await second.request('GET', `/api/runs/${before.body.runId}`)).body.agentVersion).toBe(1);
    expect((await first.request('PUT', '/api/agents/versioned', { body: { name: 'versioned', model, instructions: 'v2' } })).status).toBe(
      200,
    );
    const after = await runOn(second, 'versioned');
    expect((await second.request('GET', `/api/runs/${after.body.runId}`)).body.agentVersion).toBe(2);
    expect((await first.request('DELETE', '/api/agents/versioned')).status).toBe(204);
    expect((await runOn(second, 'versioned')).status).toBe(404);
  });

  it('admits by a quota rule another instance just stored for an agent no rule covered', async () => {
    expect(
      (await first.request('POST', '/api/agents', { body: { name: 'metered', model: { provider: 'mock', model: 'quick' } } })).status,
    ).toBe(201);
    expect((await runOn(second, 'metered')).status).toBe(200);
    const rule = { metric: 'Runs', period: 'Day', limit: 1, agentName: 'metered' };
    expect((await first.request('PUT', '/api/quotas/metered-daily', { body: rule })).status).toBe(201);
    // The first run is counted from its events, a moment after it ended.
    await eventually(async () => {
      const rules = (await first.request('GET', '/api/quotas')).body as Array<{ name: string; used: number }>;
      return rules.find((each) => each.name === 'metered-daily' && each.used >= 1);
    }, 'the first run counted');
    const refused = await runOn(second, 'metered');
    expect(refused.status, refused.text).toBe(429);
    expect((await first.request('DELETE', '/api/quotas/metered-daily')).status).toBe(204);
    expect((await runOn(second, 'metered')).status).toBe(200);
  });
});

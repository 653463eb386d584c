import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  startHangar,
  startMockOpenAI,
  startWebhookReceiver,
  type HangarUnderTest,
  type MockOpenAI,
  type WebhookReceiver,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Webhooks" on all-in-one: subscriptions, signed delivery from the event log, retries, limits. */

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const RETRY_DELAYS_MS = [300, 600];
const TIMEOUT_MS = 1000;
let hangar: HangarUnderTest;
let strict: HangarUnderTest;
let mock: MockOpenAI;
let receiver: WebhookReceiver;
const acme = { 'x-hangar-tenant': 'acme' };

const subscribe = (name: string, body: Record<string, unknown>, headers: Record<string, string> = acme, on = hangar) =>
  on.request('PUT', `/api/webhooks/${name}`, {
    body: { secretKey: 'Hangar:WebhookSecrets:main', events: ['webhook.test'], ...body },
    headers,
  });

const deliveriesOf = async (name: string, headers: Record<string, string> = acme) =>
  (await hangar.request('GET', `/api/webhooks/${name}/deliveries`, { headers })).body as any[];

const verified = (request: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>) as { type: string; timestamp: string; data: any };

beforeAll(async () => {
  [mock, receiver] = await Promise.all([startMockOpenAI(), startWebhookReceiver()]);
  mock.script('m', [{ text: 'hello' }]);
  mock.script('asks-for-clock', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'done' }
      : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } },
  );
  const common = {
    Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
    Tenancy: { Enabled: true, AllowHeaderResolution: true },
    Hangar: { WebhookSecrets: { main: SECRET, short: 'whsec_dG9vc2hvcnQ=' } },
  };
  [hangar, strict] = await Promise.all([
    startHangar({
      modules: allInOneModules(),
      overrides: {
        ...common,
        Approvals: { RequiredTools: ['clock'] },
        Webhooks: {
          AllowPrivateNetworkTargets: true,
          AllowInsecureHttp: true,
          RetryDelays: RETRY_DELAYS_MS.map((ms) => `${ms}ms`),
          Timeout: `${TIMEOUT_MS}ms`,
          MaxResponseBytes: 8192,
          MaxExtraHeaders: 3,
        },
      },
    }),
    startHangar({ modules: allInOneModules(), overrides: common }),
  ]);
});

afterAll(async () => {
  await Promise.all([hangar?.stop(), strict?.stop()]);
  await Promise.all([mock?.close(), receiver?.close()]);
});

describe('webhook subscriptions', () => {
  it('PUT creates (201) then replaces (200); GET shows the key NAME, never a secret; list, DELETE 204, then 404', async () => {
    const created = await subscribe('crud', { url: `${receiver.url}/crud`, headers: { 'X-Team': 'billing' }, description: 'ops' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'crud',
      url: `${receiver.url}/crud`,
      events: ['webhook.test'],
      secretKey: 'Hangar:WebhookSecrets:main',
      headers: { 'X-Team': 'billing' },
      enabled: true,
      description: 'ops',
      consecutiveFailures: 0,
      disabledAt: null,
    });
    expect(created.text).not.toContain(SECRET.slice(6, 20));
    const replaced = await subscribe('crud', { url: `${receiver.url}/crud2`, events: ['run.completed', 'run.completed'] });
    expect([replaced.status, replaced.body.events, replaced.body.url]).toEqual([200, ['run.completed'], `${receiver.url}/crud2`]);
    expect((await hangar.request('GET', '/api/webhooks', { headers: acme })).body.map((each: any) => each.name)).toContain('crud');
    expectProblem(await hangar.request('GET', '/api/webhooks/crud', { headers: { 'x-hangar-tenant': 'globex' } }), 404, 'not_found');
    expect((await hangar.request('DELETE', '/api/webhooks/crud', { headers: acme })).status).toBe(204);
    expectProblem(await hangar.request('GET', '/api/webhooks/crud', { headers: acme }), 404, 'not_found');
  });

  it('refuses a secret key outside the prefix, too many headers, unknown kinds and other schemes (400); drops headers it sets itself', async () => {
    const url = `${receiver.url}/refused`;
    expectProblem(await subscribe('bad', { url, secretKey: 'Hangar:ProviderKeys:main' }), 400, 'validation_failed');
    expectProblem(await subscribe('bad', { url, headers: { a: '1', b: '2', c: '3', d: '4' } }), 400, 'validation_failed');
    expectProblem(await subscribe('bad', { url, events: ['run.exploded'] }), 400, 'validation_failed');
    expectProblem(await subscribe('bad', { url: 'ftp://127.0.0.1/x' }), 400, 'validation_failed');
    expectProblem(await subscribe('bad', { url, headers: { 'x-ok': '1', 'x-bad': 'a\r\nb' } }), 400, 'validation_failed');
    expectProblem(await hangar.request('GET', '/api/webhooks/bad', { headers: acme }), 404, 'not_found');
    const dropped = await subscribe('dropped', {
      url,
      headers: { 'Webhook-Signature': 'v1,forged', 'Content-Type': 'text/plain', Host: 'evil', 'User-Agent': 'x', 'X-Kept': 'yes' },
    });
    expect([dropped.status, dropped.body.headers]).toEqual([201, { 'X-Kept': 'yes' }]);
  });

  it('with private targets refused (the defaults), IP literals in every private form and localhost are refused at save', async () => {
    const targets = [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://10.0.0.1/',
      'https://172.16.0.1/',
      'https://192.168.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/',
      'https://[fc00::1]/',
      'https://[fe80::1]/',
      'https://224.0.0.1/',
      'https://0.0.0.0/',
      'https://localhost/',
      `${receiver.url}/strict`,
    ];
    for (const url of targets) expectProblem(await subscribe('ssrf', { url }, acme, strict), 400, 'validation_failed');
    expect((await subscribe('public', { url: 'https://hooks.example.com/in' }, acme, strict)).status).toBe(201);
    expect(receiver.to('/strict')).toHaveLength(0);
  });
});

describe('webhook delivery', () => {
  it('delivers run.completed with the run record, signed per Standard Webhooks (verified with the standardwebhooks package)', async () => {
    await subscribe('runs', { url: `${receiver.url}/runs`, events: ['run.completed', 'run.failed'], headers: { 'X-Team': 'billing' } });
    expect(
      (await hangar.request('POST', '/api/agents', { body: { name: 'bot', model: { provider: 'mock', model: 'm' } }, headers: acme }))
        .status,
    ).toBe(201);
    const run = await hangar.request('POST', '/api/agents/bot/run', {
      body: { message: 'hi' },
      headers: { ...acme, 'idempotency-key': 'webhook-run' },
    });
    expect(run.status, run.text).toBe(200);
    const [request] = await eventually(
      () => (receiver.to('/runs').length ? receiver.to('/runs') : undefined),
      'the run.completed delivery',
    );
    const payload = verified(request);
    const record = (await hangar.request('GET', `/api/runs/${run.body.runId}`, { headers: acme })).body;
    expect(payload).toEqual({ type: 'run.completed', timestamp: expect.any(String), data: record });
    expect(request.headers['x-team']).toBe('billing');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toMatch(/^evt_/);
    // Another tenant's subscriptions never see acme's runs.
    expect(receiver.received.filter((entry) => entry.path === '/runs' && verified(entry).data.id !== run.body.runId)).toEqual([]);
  });

  it('delivers agent.created / updated / deleted with { name, version }, and approval.requested', async () => {
    await subscribe('agents', {
      url: `${receiver.url}/agents`,
      events: ['agent.created', 'agent.updated', 'agent.deleted', 'approval.requested'],
    });
    const definition = { name: 'watched', model: { provider: 'mock', model: 'asks-for-clock' }, tools: ['clock'] };
    expect((await hangar.request('POST', '/api/agents', { body: definition, headers: acme })).status).toBe(201);
    expect(
      (await hangar.request('PUT', '/api/agents/watched', { body: { ...definition, instructions: 'v2' }, headers: acme })).status,
    ).toBe(200);
    const run = await hangar.request('POST', '/api/agents/watched/run', {
      body: { message: 'time?' },
      headers: { ...acme, prefer: 'respond-async' },
    });
    expect(run.status, run.text).toBe(202);
    const approvals = await eventually(async () => {
      const listed = (await hangar.request('GET', `/api/runs/${run.body.runId}/approvals`, { headers: acme })).body;
      return listed.length ? listed : undefined;
    }, 'the approval request');
    expect((await hangar.request('DELETE', '/api/agents/watched', { headers: acme })).status).toBe(204);
    const payloads = await eventually(
      () => (receiver.to('/agents').length >= 4 ? receiver.to('/agents').map(verified) : undefined),
      'four deliveries',
    );
    const byType = Object.fromEntries(payloads.map((payload) => [payload.type, payload.data]));
    expect(byType).toEqual({
      'agent.created': { name: 'watched', version: 1 },
      'agent.updated': { name: 'watched', version: 2 },
      'agent.deleted': { name: 'watched', version: 2 },
      'approval.requested': { runId: run.body.runId, approvalId: approvals[0].id, toolName: 'clock' },
    });
    // Decided, so the queued run ends (a stopping worker waits for the runs it holds).
    const decided = await hangar.request('POST', `/api/runs/${run.body.runId}/approvals/${approvals[0].id}`, {
      body: { approved: false },
      headers: acme,
    });
    expect(decided.status, decided.text).toBe(200);
  });

  it('retries a receiver that fails twice after the RetryDelays schedule, with the same webhook-id, and logs each attempt', async () => {
    receiver.answer('/flaky', (n) => ({ status: n <= 2 ? 503 : 200 }));
    await subscribe('flaky', { url: `${receiver.url}/flaky` });
    const { deliveryId } = (await hangar.request('POST', '/api/webhooks/flaky/test', { headers: acme })).body;
    const detail = await eventually(
      async () => {
        const found = (await hangar.request('GET', `/api/webhooks/flaky/deliveries/${deliveryId}`, { headers: acme })).body;
        return found.status === 'Delivered' ? found : undefined;
      },
      'the third attempt',
      10_000,
    );
    const attempts = receiver.to('/flaky');
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((attempt) => attempt.headers['webhook-id'])).size).toBe(1);
    for (const attempt of attempts) expect(verified(attempt).type).toBe('webhook.test');
    const gaps = [attempts[1].at - attempts[0].at, attempts[2].at - attempts[1].at];
    // Never before the schedule; after it, within 2.5 s (two cores, eleven processes on the split
    // shape under CI: an attempt came 1.4 s late). That each planned retry wakes at its own time,
    // not at a poll, is webhook-delivery.test.ts's, with a minute-long poll.
    gaps.forEach((gap, index) => {
      expect(gap).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[index] * 0.9 - 20);
      expect(gap).toBeLessThan(RETRY_DELAYS_MS[index] * 1.1 + 2500);
    });
    expect(detail).toMatchObject({
      attempt: 3,
      status: 'Delivered',
      responseStatus: 200,
      error: null,
      payload: { type: 'webhook.test', data: {} },
    });
    expect(detail.attempts.map((attempt: any) => attempt.responseStatus)).toEqual([503, 503, 200]);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(receiver.to('/flaky')).toHaveLength(3);
  });

  it('abandons a delivery after the last retry of the schedule', async () => {
    receiver.answer('/down', () => ({ status: 500 }));
    await subscribe('down', { url: `${receiver.url}/down` });
    const { deliveryId } = (await hangar.request('POST', '/api/webhooks/down/test', { headers: acme })).body;
    const detail = await eventually(
      async () => {
        const found = (await hangar.request('GET', `/api/webhooks/down/deliveries/${deliveryId}`, { headers: acme })).body;
        return found.status === 'Abandoned' ? found : undefined;
      },
      'abandonment',
      10_000,
    );
    expect([detail.attempt, detail.nextAttemptAt, receiver.to('/down').length]).toEqual([RETRY_DELAYS_MS.length + 1, null, 3]);
    expect((await deliveriesOf('down')).map((delivery) => delivery.status)).toEqual(['Abandoned']);
  });

  it('disables a subscription after 20 consecutive failed attempts, and audits it; enabling it again clears the count', async () => {
    receiver.answer('/broken', () => ({ status: 500 }));
    await subscribe('broken', { url: `${receiver.url}/broken` });
    for (let i = 0; i < 7; i++) expect((await hangar.request('POST', '/api/webhooks/broken/test', { headers: acme })).status).toBe(202);
    const disabled = await eventually(
      async () => {
        const found = (await hangar.request('GET', '/api/webhooks/broken', { headers: acme })).body;
        return found.enabled ? undefined : found;
      },
      'the subscription disabled',
      15_000,
    );
    expect(disabled).toMatchObject({ enabled: false, consecutiveFailures: 20, disabledAt: expect.any(String) });
    // A test reaches a disabled subscription too (an operator checks it so): the tests' retries still due
    // when the 20th attempt failed go out (7 tests of 3 attempts, the 21st after the disable), then nothing.
    const everyAttempt = 7 * (1 + RETRY_DELAYS_MS.length);
    await eventually(() => (receiver.to('/broken').length >= everyAttempt ? true : undefined), 'every test attempt', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.to('/broken')).toHaveLength(everyAttempt);
    const audit = (await hangar.request('GET', '/api/audit?action=webhook.disabled', { headers: acme })).body;
    expect(audit).toHaveLength(1);
    const enabled = await subscribe('broken', { url: `${receiver.url}/broken`, enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledAt: null });
  });

  it('does not follow a redirect', async () => {
    receiver.answer('/moved', () => ({ redirect: `${receiver.url}/landed` }));
    await subscribe('moved', { url: `${receiver.url}/moved` });
    await hangar.request('POST', '/api/webhooks/moved/test', { headers: acme });
    const [delivery] = await eventually(async () => {
      const found = await deliveriesOf('moved');
      return found[0]?.attempt ? found : undefined;
    }, 'the first attempt');
    expect(delivery).toMatchObject({ status: 'Failed', responseStatus: 302, error: expect.stringContaining('redirects are not followed') });
    expect(receiver.to('/landed')).toHaveLength(0);
  });

  it('cuts a receiver that never answers at Timeout', async () => {
    receiver.answer('/silent', () => ({ hang: true }));
    await subscribe('silent', { url: `${receiver.url}/silent` });
    const { deliveryId } = (await hangar.request('POST', '/api/webhooks/silent/test', { headers: acme })).body;
    const detail = await eventually(
      async () => {
        const found = (await hangar.request('GET', `/api/webhooks/silent/deliveries/${deliveryId}`, { headers: acme })).body;
        return found.attempts.length ? found : undefined;
      },
      'the first attempt',
      5000,
    );
    expect(detail.attempts[0].error).toMatch(/timeout/);
    expect(detail.attempts[0].durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(detail.attempts[0].durationMs).toBeLessThan(TIMEOUT_MS + 500);
  });

  it('reads at most MaxResponseBytes of a 10 MiB answer', async () => {
    receiver.answer('/huge', () => ({ streamBytes: 10 * 1024 * 1024 }));
    await subscribe('huge', { url: `${receiver.url}/huge` });
    const { deliveryId } = (await hangar.request('POST', '/api/webhooks/huge/test', { headers: acme })).body;
    const detail = await eventually(
      async () => {
        const found = (await hangar.request('GET', `/api/webhooks/huge/deliveries/${deliveryId}`, { headers: acme })).body;
        return found.attempts.length ? found : undefined;
      },
      'the attempt',
      5000,
    );
    expect(detail, JSON.stringify(detail)).toMatchObject({ status: 'Delivered', responseStatus: 200 });
    await eventually(() => (receiver.streams.length ? true : undefined), 'the stream');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.streams[0].finished).toBe(false);
    expect(receiver.streams[0].written).toBeLessThan(10 * 1024 * 1024);
  });

  it('fails an attempt whose secret is missing or unusable, naming the key, never sending unsigned', async () => {
    await subscribe('unsigned', { url: `${receiver.url}/unsigned`, secretKey: 'Hangar:WebhookSecrets:absent' });
    await subscribe('weak', { url: `${receiver.url}/weak`, secretKey: 'Hangar:WebhookSecrets:short' });
    for (const name of ['unsigned', 'weak']) await hangar.request('POST', `/api/webhooks/${name}/test`, { headers: acme });
    const errors = await eventually(async () => {
      const found = [...(await deliveriesOf('unsigned')), ...(await deliveriesOf('weak'))];
      return found.every((delivery) => delivery.attempt > 0) ? found.map((delivery) => delivery.error) : undefined;
    }, 'the attempts');
    expect(errors[0]).toMatch(/"Hangar:WebhookSecrets:absent" is not configured/);
    expect(errors[1]).toMatch(/"Hangar:WebhookSecrets:short" is not a Standard Webhooks secret/);
    expect([...receiver.to('/unsigned'), ...receiver.to('/weak')]).toHaveLength(0);
  });
});

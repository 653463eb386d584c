import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  parseSseFrames,
  startHangar,
  startMockOpenAI,
  startWebhookReceiver,
  type HangarUnderTest,
  type MockOpenAI,
  type WebhookReceiver,
} from '@hangar/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Quota threshold notices": a rule's usage crossing each of Quotas:ThresholdPercents in a
 * window is announced once: to webhooks (quota.threshold), to the audit trail, and with
 * Quotas:PublishThresholdToRunStream as an `update` frame on the stream of the run that crossed it.
 */

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
let hangar: HangarUnderTest;
let mock: MockOpenAI;
let receiver: WebhookReceiver;
const as = (tenant: string) => ({ 'x-hangar-tenant': tenant });

beforeAll(async () => {
  [mock, receiver] = await Promise.all([startMockOpenAI(), startWebhookReceiver()]);
  mock.script('metered', [{ text: 'fifteen tokens', usage: { prompt: 10, completion: 5 } }]);
  mock.script('slow', [{ text: 'one two three four five six seven eight nine ten', chunkDelayMs: 150 }]);
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Quotas: { ThresholdPercents: [50, 100], PublishThresholdToRunStream: true },
      Hangar: { WebhookSecrets: { main: SECRET } },
      Webhooks: { AllowPrivateNetworkTargets: true, AllowInsecureHttp: true },
    },
  });
});

afterAll(async () => {
  await hangar?.stop();
  await Promise.all([mock?.close(), receiver?.close()]);
});

/** A tenant with an agent, a quota rule and a webhook subscription to quota.threshold at `/<tenant>`. */
async function tenantWith(tenant: string, model: string, rule: Record<string, unknown>) {
  const created = await hangar.request('POST', '/api/agents', {
    body: { name: 'bot', model: { provider: 'mock', model } },
    headers: as(tenant),
  });
  expect(created.status, created.text).toBe(201);
  expect((await hangar.request('PUT', '/api/quotas/limit', { body: rule, headers: as(tenant) })).status).toBe(201);
  const subscribed = await hangar.request('PUT', '/api/webhooks/notices', {
    body: { url: `${receiver.url}/${tenant}`, events: ['quota.threshold'], secretKey: 'Hangar:WebhookSecrets:main' },
    headers: as(tenant),
  });
  expect(subscribed.status, subscribed.text).toBe(201);
}

const runJson = (tenant: string) =>
  hangar.request('POST', '/api/agents/bot/run', {
    body: { message: 'go' },
    headers: { ...as(tenant), 'idempotency-key': randomBytes(6).toString('hex') },
  });
const notices = (tenant: string) =>
  receiver
    .to(`/${tenant}`)
    .map((entry) => new Webhook(SECRET).verify(entry.body, entry.headers as Record<string, string>) as { type: string; data: any });
const auditOf = async (tenant: string) =>
  (await hangar.request('GET', '/api/audit?action=quota.threshold', { headers: as(tenant) })).body as any[];
const usedIs = (tenant: string, used: number) =>
  eventually(
    async () => ((await hangar.request('GET', '/api/quotas', { headers: as(tenant) })).body[0]?.used === used ? true : undefined),
    `used ${used}`,
  );

describe('quota threshold notices', () => {
  it('announce each threshold once per window, as the runs of a Runs rule reach it', async () => {
    await tenantWith('runs', 'metered', { metric: 'Runs', period: 'Hour', limit: 4 });
    for (let n = 1; n <= 4; n++) {
      expect((await runJson('runs')).status).toBe(200);
      await usedIs('runs', n);
      const expected = n >= 4 ? 2 : n >= 2 ? 1 : 0;
      await eventually(() => (notices('runs').length === expected ? true : undefined), `${expected} notices after run ${n}`);
    }
    expect((await runJson('runs')).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = notices('runs');
    expect(sent.map((notice) => [notice.type, notice.data.percent, notice.data.used])).toEqual([
      ['quota.threshold', 50, 2],
      ['quota.threshold', 100, 4],
    ]);
    expect(sent[1].data).toEqual({ quota: 'limit', percent: 100, limit: 4, used: 4, resetsAt: expect.any(String) });
    const trail = await auditOf('runs');
    expect(trail.map((entry) => [entry.resourceId, entry.details.percent])).toEqual(
      expect.arrayContaining([
        ['limit', 50],
        ['limit', 100],
      ]),
    );
    expect(trail).toHaveLength(2);
  });

  it('announce every threshold one step crosses (a run of 15 tokens against a limit of 10)', async () => {
    await tenantWith('tokens', 'metered', { metric: 'Tokens', period: 'Day', limit: 10 });
    expect((await runJson('tokens')).status).toBe(200);
    await eventually(() => (notices('tokens').length === 2 ? true : undefined), 'two notices');
    expect(
      notices('tokens')
        .map((notice) => notice.data.percent)
        .sort(),
    ).toEqual([100, 50]);
    expect(notices('tokens').every((notice) => notice.data.used === 15)).toBe(true);
  });

  it('reach the stream of the run that crossed them as update frames', async () => {
    await tenantWith('streamed', 'slow', { metric: 'Runs', period: 'Hour', limit: 1 });
    const streamed = await hangar.request('POST', '/api/agents/bot/run', { body: { message: 'go' }, headers: as('streamed') });
    expect(streamed.status).toBe(200);
    const frames = parseSseFrames(streamed.text);
    const notices = frames.filter((frame) => frame.event === 'update' && frame.data.type === 'quota-threshold').map((frame) => frame.data);
    expect(notices.map((notice) => notice.percent).sort()).toEqual([100, 50]);
    expect(notices[0]).toMatchObject({ quota: 'limit', limit: 1, used: 1, resetsAt: expect.any(String) });
    expect(frames.at(-1)?.event).toBe('done');
  });
});

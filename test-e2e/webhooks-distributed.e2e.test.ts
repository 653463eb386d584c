import { randomBytes } from 'node:crypto';
import {
  eventually,
  httpRequest,
  parseSseFrames,
  startDistributed,
  startWebhookReceiver,
  TEST_KAFKA_BROKERS,
  type DistributedHangar,
  type WebhookReceiver,
} from '@hangar/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Webhooks on the distributed shape: every service its own process on PostgreSQL, run events and
 * agent changes through a real Kafka broker to the governance-webhooks consumer group. A governance
 * process killed (SIGKILL) mid-delivery, or while events pile up, loses none: the delivery is made
 * again with the same webhook-id.
 */

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const TIMEOUT_MS = 2000;
let hangar: DistributedHangar;
let receiver: WebhookReceiver;
const request = (method: string, path: string, body?: unknown) => httpRequest(hangar.url, method, path, { body });
const verified = (entry: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(SECRET).verify(entry.body, entry.headers as Record<string, string>) as { type: string; data: any };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  hangar = await startDistributed({
    env: {
      HANGAR__Kafka__Brokers: TEST_KAFKA_BROKERS.join(','),
      HANGAR__Kafka__TopicPrefix: `t_${randomBytes(5).toString('hex')}.`,
      HANGAR__Hangar__WebhookSecrets__main: SECRET,
      HANGAR__Webhooks__AllowPrivateNetworkTargets: 'true',
      HANGAR__Webhooks__AllowInsecureHttp: 'true',
      HANGAR__Webhooks__Timeout: `${TIMEOUT_MS}ms`,
      HANGAR__Webhooks__RetryDelays: '200ms,400ms,800ms',
    },
  });
  expect((await request('POST', '/api/agents', { name: 'bot', model: { provider: 'demo', model: 'echo' } })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await hangar?.cleanup();
  await receiver?.close();
});

const subscribe = (name: string, events: string[]) =>
  request('PUT', `/api/webhooks/${name}`, { url: `${receiver.url}/${name}`, events, secretKey: 'Hangar:WebhookSecrets:main' });

/** A streamed run (no Idempotency-Key: it needs no governance call to be served). */
const runOnce = async () => {
  const run = await httpRequest(hangar.url, 'POST', '/api/agents/bot/run', { body: { message: 'hi' } });
  expect(run.status, run.text).toBe(200);
  const frames = parseSseFrames(run.text);
  expect(frames.at(-1)?.event).toBe('done');
  return frames.find((frame) => frame.event === 'run')!.data.runId as string;
};

describe('webhooks through Kafka', () => {
  it('delivers run.completed and agent changes, signed, with the run record', async () => {
    expect((await subscribe('runs', ['run.completed', 'agent.updated'])).status).toBe(201);
    const runId = await runOnce();
    expect(
      (await request('PUT', '/api/agents/bot', { name: 'bot', model: { provider: 'demo', model: 'echo' }, instructions: 'v2' })).status,
    ).toBe(200);
    const payloads = await eventually(
      () => (receiver.to('/runs').length >= 2 ? receiver.to('/runs').map(verified) : undefined),
      'both deliveries',
      20_000,
    );
    const record = (await request('GET', `/api/runs/${runId}`)).body;
    expect(payloads.find((payload) => payload.type === 'run.completed')?.data).toEqual(record);
    expect(payloads.find((payload) => payload.type === 'agent.updated')?.data).toEqual({ name: 'bot', version: 2 });
  }, 60_000);

  it('a governance process killed mid-delivery: the restarted one delivers again, same webhook-id', async () => {
    receiver.answer('/crash', (n) => (n === 1 ? { hang: true } : { status: 200 }));
    expect((await subscribe('crash', ['run.completed'])).status).toBe(201);
    await runOnce();
    await eventually(() => (receiver.to('/crash').length ? true : undefined), 'the first attempt', 20_000);
    hangar.processes.get('Governance')!.kill('SIGKILL');
    await hangar.exits.get('Governance');
    hangar.restart('Governance');
    const [first, second] = await eventually(
      () => (receiver.to('/crash').length >= 2 ? receiver.to('/crash') : undefined),
      'the attempt after the restart',
      30_000,
    );
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(verified(second).type).toBe('run.completed');
    const deliveries = await eventually(
      async () => {
        const found = (await request('GET', '/api/webhooks/crash/deliveries')).body;
        return Array.isArray(found) && found[0]?.status === 'Delivered' ? found : undefined;
      },
      'the delivery recorded',
      20_000,
    );
    expect(deliveries).toHaveLength(1);
  }, 90_000);

  it('events that happen while governance is down are delivered once it is back', async () => {
    expect((await subscribe('backlog', ['run.completed'])).status).toBe(201);
    const warmUp = await runOnce(); // the gateway now knows the tenant is enabled, and serves runs while governance is away
    hangar.processes.get('Governance')!.kill('SIGKILL');
    await hangar.exits.get('Governance');
    const runIds = [await runOnce(), await runOnce(), await runOnce()];
    hangar.restart('Governance');
    const delivered = () => receiver.to('/backlog').map((entry) => verified(entry).data.id as string);
    await eventually(() => ([warmUp, ...runIds].every((id) => delivered().includes(id)) ? true : undefined), 'every run delivered', 30_000);
    // At least once: a run's outcome may arrive twice (same webhook-id), never with two ids.
    const idsByRun = new Map<string, Set<string>>();
    for (const entry of receiver.to('/backlog')) {
      const runId = verified(entry).data.id as string;
      idsByRun.set(runId, (idsByRun.get(runId) ?? new Set()).add(String(entry.headers['webhook-id'])));
    }
    expect([...idsByRun.values()].every((ids) => ids.size === 1)).toBe(true);
  }, 90_000);
});

import { randomBytes } from 'node:crypto';
import { createLogger, EgressRefusedError, type EgressClient, type EgressRequest } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createDeliveryWorker, type DeliverySettings } from '../src/webhooks/webhook-delivery.js';
import type { AttemptOutcome, DueDelivery, WebhookRepository } from '../src/webhooks/webhook.repository.js';

/** The delivery rules with strict fakes: signing, the retry schedule, giving up, refusals, and how many attempts run at once. */

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SETTINGS: DeliverySettings = {
  timeoutMs: 1000,
  maxResponseBytes: 8192,
  retryDelaysMs: [60_000, 300_000],
  disableAfter: 20,
  concurrency: 2,
  pollIntervalMs: 60_000,
  userAgent: 'Hangar-Webhooks/test',
};
const due = (n: number, attempt = 0): DueDelivery => ({
  id: `d${n}`,
  tenantId: 't1',
  subscriptionId: 's1',
  subscriptionName: 'ops',
  eventId: `evt_${n}`,
  body: JSON.stringify({ type: 'webhook.test', timestamp: '2026-11-25T00:00:00Z', data: { n } }),
  attempt,
  url: 'https://hooks.example.com/in',
  secretKey: 'Hangar:WebhookSecrets:main',
  headers: { 'X-Team': 'billing' },
});

/** Runs one worker over `queue` until every delivery was recorded; what was sent and recorded. */
async function deliverAll(
  queue: DueDelivery[],
  answer: (request: EgressRequest, delivery: DueDelivery) => Promise<{ status: number }>,
  options: { secret?: (key: string) => { value: string } | { error: string }; egress?: boolean } = {},
) {
  const recorded: Array<{ id: string; outcome: AttemptOutcome }> = [];
  const sent: EgressRequest[] = [];
  const disabled: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let settle!: () => void;
  const allRecorded = new Promise<void>((resolve) => (settle = resolve));
  const total = queue.length;
  const repository = strictFake<Pick<WebhookRepository, 'claimDue' | 'recordAttempt'>>('repository', {
    async claimDue(_owner, limit) {
      return queue.splice(0, limit);
    },
    async recordAttempt(delivery, _owner, outcome) {
      recorded.push({ id: delivery.id, outcome });
      if (recorded.length === total) settle();
      return { recorded: true, disabled: !outcome.delivered && delivery.id === 'd-disables' };
    },
  });
  const egress =
    options.egress === false
      ? strictFake<EgressClient>('egress', {})
      : strictFake<EgressClient>('egress', {
          async request(url, init) {
            inFlight++;
            mostInFlight = Math.max(mostInFlight, inFlight);
            sent.push(init);
            try {
              const delivery = JSON.parse(String(init.body)).data.n;
              const { status } = await answer(init, due(delivery));
              return { status, headers: {}, body: Buffer.alloc(0), truncated: false };
            } finally {
              inFlight--;
            }
          },
        });
  const worker = createDeliveryWorker({
    repository,
    egress,
    secret: options.secret ?? (() => ({ value: SECRET })),
    disabled: (delivery) => disabled.push(delivery.id),
    logger: createLogger({ name: 'test', level: 'silent' }),
    settings: SETTINGS,
    random: () => 0.5,
  });
  worker.start();
  await allRecorded;
  await worker.stop();
  return { recorded, sent, disabled, mostInFlight };
}

describe('webhook delivery worker', () => {
  it('signs each attempt per Standard Webhooks over the exact body, with the subscription’s headers', async () => {
    const { recorded, sent } = await deliverAll([due(1)], async () => ({ status: 204 }));
    expect(recorded[0].outcome).toMatchObject({ delivered: true, responseStatus: 204, error: null });
    const [request] = sent;
    expect(request.headers).toMatchObject({
      'X-Team': 'billing',
      'content-type': 'application/json',
      'user-agent': 'Hangar-Webhooks/test',
      'webhook-id': 'evt_1',
    });
    expect(new Webhook(SECRET).verify(String(request.body), request.headers as Record<string, string>)).toEqual(JSON.parse(due(1).body));
    expect(request).toMatchObject({ method: 'POST', timeoutMs: 1000, maxResponseBytes: 8192 });
  });

  it('plans the next retry after the delay of the schedule for the attempts made, and gives up after the last', async () => {
    const started = Date.now();
    const { recorded } = await deliverAll([due(1, 0), due(2, 1), due(3, 2)], async () => ({ status: 500 }));
    const byId = Object.fromEntries(recorded.map(({ id, outcome }) => [id, outcome]));
    expect(byId.d1.retryAt!.getTime() - started).toBeGreaterThanOrEqual(60_000);
    expect(byId.d1.retryAt!.getTime() - started).toBeLessThan(61_000);
    expect(byId.d2.retryAt!.getTime() - started).toBeGreaterThanOrEqual(300_000);
    expect(byId.d3.retryAt).toBeUndefined();
    expect(byId.d3).toMatchObject({ delivered: false, responseStatus: 500, error: 'the receiver answered HTTP 500' });
  });

  it('counts a redirect and a refused target as failures, naming why', async () => {
    const { recorded } = await deliverAll([due(1), due(2)], async (_request, delivery) => {
      if (delivery.id === 'd1') return { status: 302 };
      throw new EgressRefusedError('the target hooks.example.com resolves to 10.0.0.5, a private network address');
    });
    const errors = Object.fromEntries(recorded.map(({ id, outcome }) => [id, outcome.error]));
    expect(errors.d1).toBe('the receiver redirected (HTTP 302); redirects are not followed');
    expect(errors.d2).toBe('refused: the target hooks.example.com resolves to 10.0.0.5, a private network address');
  });

  it('never sends without a usable secret', async () => {
    const { recorded } = await deliverAll([due(1)], async () => ({ status: 200 }), {
      secret: () => ({ error: 'the signing secret "Hangar:WebhookSecrets:main" is not configured' }),
      egress: false,
    });
    expect(recorded[0].outcome).toMatchObject({
      delivered: false,
      error: 'the signing secret "Hangar:WebhookSecrets:main" is not configured',
    });
    const weak = await deliverAll([due(2)], async () => ({ status: 200 }), { secret: () => ({ value: 'whsec_c2hvcnQ=' }), egress: false });
    expect(weak.recorded[0].outcome.error).toMatch(/is not a Standard Webhooks secret/);
  });

  it('attempts each planned retry when it comes due, not only the soonest, without waiting for the poll', async () => {
    // d1 is retried after 100 ms, d2 (one attempt made already) after 400 ms; the poll is a minute away.
    const originals = new Map([due(1, 0), due(2, 1)].map((delivery) => [delivery.id, delivery]));
    const waiting = [...originals.values()].map((delivery) => ({ delivery, dueAt: 0 }));
    const attempts: Array<{ id: string; at: number }> = [];
    let settle!: () => void;
    const bothDelivered = new Promise<void>((resolve) => (settle = resolve));
    let delivered = 0;
    const repository = strictFake<Pick<WebhookRepository, 'claimDue' | 'recordAttempt'>>('repository', {
      async claimDue(_owner, limit) {
        const now = Date.now();
        const ready = waiting.filter((entry) => entry.dueAt <= now).slice(0, limit);
        for (const entry of ready) waiting.splice(waiting.indexOf(entry), 1);
        return ready.map((entry) => entry.delivery);
      },
      async recordAttempt(delivery, _owner, outcome) {
        if (outcome.delivered && ++delivered === 2) settle();
        if (outcome.retryAt)
          waiting.push({ delivery: { ...originals.get(delivery.id)!, attempt: delivery.attempt + 1 }, dueAt: outcome.retryAt.getTime() });
        return { recorded: true, disabled: false };
      },
    });
    const egress = strictFake<EgressClient>('egress', {
      async request(_url, init) {
        const { n } = JSON.parse(String(init.body)).data;
        attempts.push({ id: `d${n}`, at: Date.now() });
        // Each delivery fails its first attempt here.
        return {
          status: attempts.filter((attempt) => attempt.id === `d${n}`).length === 1 ? 503 : 204,
          headers: {},
          body: Buffer.alloc(0),
          truncated: false,
        };
      },
    });
    const worker = createDeliveryWorker({
      repository,
      egress,
      secret: () => ({ value: SECRET }),
      disabled: () => {},
      logger: createLogger({ name: 'test', level: 'silent' }),
      settings: { ...SETTINGS, retryDelaysMs: [100, 400, 400] },
      random: () => 0.5,
    });
    worker.start();
    await Promise.race([
      bothDelivered,
      new Promise((_, reject) => setTimeout(() => reject(new Error('a retry waited for the poll')), 5000)),
    ]);
    await worker.stop();
    const gap = (id: string) => {
      const [first, second] = attempts.filter((attempt) => attempt.id === id);
      return second.at - first.at;
    };
    expect(gap('d1')).toBeGreaterThanOrEqual(95);
    expect(gap('d2')).toBeGreaterThanOrEqual(395);
    expect(gap('d2')).toBeLessThan(2000);
  });

  it('keeps at most `concurrency` attempts in flight, and tells when an attempt disabled the subscription', async () => {
    const queue = [1, 2, 3, 4, 5].map((n) => due(n));
    queue.push({ ...due(6), id: 'd-disables' });
    const { recorded, mostInFlight, disabled } = await deliverAll(queue, async (_request, delivery) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { status: delivery.id === 'd6' ? 500 : 200 };
    });
    expect(recorded).toHaveLength(6);
    expect(mostInFlight).toBe(SETTINGS.concurrency);
    expect(disabled).toEqual(['d-disables']);
  });
});

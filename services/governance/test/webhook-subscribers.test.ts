import { WEBHOOK_CHANGES_CHANNEL } from '@hangar/contracts';
import { createInProcessPubSub, type PubSub } from '@hangar/messaging';
import { createLogger, type Caller } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { createSubscriberCache } from '../src/webhooks/subscriber-cache.js';
import type { NewDelivery, Subscriber, SubscriptionInput, WebhookRepository } from '../src/webhooks/webhook.repository.js';
import { createWebhookService } from '../src/webhooks/webhook.service.js';

const logger = createLogger({ name: 'test', level: 'silent' });
const acme: Caller = { tenantId: 'acme', actor: 'test' };
const input = (overrides: Partial<SubscriptionInput> = {}): SubscriptionInput => ({
  name: 'hook',
  url: 'https://receiver.example/hook',
  events: ['run.completed'],
  secretKey: 'Webhooks:Secrets:hook',
  headers: {},
  enabled: true,
  description: null,
  ...overrides,
});
const completed = (id: string) => ({
  id,
  tenantId: 'acme',
  type: 'run.completed' as const,
  timestamp: '2026-11-27T00:00:00Z',
  data: () => ({}),
});

/** A governance instance: its webhook service over the store the instances share, and its own subscriber cache. */
function instance(stored: Map<string, Subscriber[]>, pubsub: PubSub) {
  const reads: string[] = [];
  const queued: NewDelivery[] = [];
  const audited: string[] = [];
  const repository = strictFake<WebhookRepository>('webhooks', {
    async enabledSubscriptions(tenantId) {
      reads.push(tenantId);
      return stored.get(tenantId) ?? [];
    },
    async putSubscription(tenantId, saved) {
      const id = `${tenantId}/${saved.name}`;
      const others = (stored.get(tenantId) ?? []).filter((subscriber) => subscriber.id !== id);
      stored.set(tenantId, saved.enabled ? [...others, { id, events: saved.events }] : others);
      return { subscription: { ...saved, id } as never, created: true };
    },
    async deleteSubscription(tenantId, name) {
      stored.set(
        tenantId,
        (stored.get(tenantId) ?? []).filter((subscriber) => subscriber.id !== `${tenantId}/${name}`),
      );
      return true;
    },
    async enqueue(deliveries) {
      queued.push(...deliveries);
      return deliveries.map((delivery) => delivery.eventId);
    },
  });
  const subscribers = createSubscriberCache({ repository, pubsub, logger });
  const service = createWebhookService({
    repository,
    subscribers,
    audit: async (_caller, entry) => void audited.push(entry.action),
    queued: () => {},
    settings: {
      secretKeyPrefix: 'Webhooks:Secrets:',
      maxExtraHeaders: 4,
      egress: { allowPrivateNetworkTargets: false, allowInsecureHttp: false },
      delivering: true,
    },
  });
  return { service, subscribers, reads, queued, audited };
}

describe('webhook subscribers as events are offered', () => {
  it('reads a tenant’s subscriptions once, and offers each event to those that want its kind', async () => {
    const stored = new Map<string, Subscriber[]>([
      [
        'acme',
        [
          { id: 'runs', events: ['run.completed', 'run.failed'] },
          { id: 'agents', events: ['agent.created'] },
        ],
      ],
    ]);
    const governance = instance(stored, createInProcessPubSub());
    await governance.subscribers.start();
    expect(await governance.service.offer(completed('evt_1'))).toBe(1);
    expect(await governance.service.offer(completed('evt_2'))).toBe(1);
    expect(await governance.service.offer({ ...completed('evt_3'), type: 'agent.created' })).toBe(1);
    expect(await governance.service.offer({ ...completed('evt_4'), type: 'quota.threshold' })).toBe(0);
    expect(governance.queued.map((delivery) => [delivery.subscriptionId, delivery.eventId])).toEqual([
      ['runs', 'evt_1'],
      ['runs', 'evt_2'],
      ['agents', 'evt_3'],
    ]);
    expect(governance.reads).toEqual(['acme']);
    await governance.subscribers.stop();
  });

  it('offers to a subscription created, and no longer to one deleted or disabled, on this instance and on another', async () => {
    const stored = new Map<string, Subscriber[]>();
    const pubsub = createInProcessPubSub();
    const [a, b] = [instance(stored, pubsub), instance(stored, pubsub)];
    await Promise.all([a.subscribers.start(), b.subscribers.start()]);
    // Both know acme has no subscriber.
    expect([await a.service.offer(completed('evt_0')), await b.service.offer(completed('evt_0'))]).toEqual([0, 0]);

    await a.service.put(acme, 'hook', input());
    expect([await a.service.offer(completed('evt_1')), await b.service.offer(completed('evt_2'))]).toEqual([1, 1]);

    // The delivery worker disabled it after its failures: the store first, then the announcement.
    stored.set('acme', []);
    await a.service.disabledByFailures({ tenantId: 'acme', subscriptionName: 'hook' }, '20 consecutive failed attempts');
    expect([await a.service.offer(completed('evt_3')), await b.service.offer(completed('evt_4'))]).toEqual([0, 0]);

    await b.service.put(acme, 'hook', input());
    expect([await a.service.offer(completed('evt_5')), await b.service.offer(completed('evt_6'))]).toEqual([1, 1]);
    await b.service.delete(acme, 'hook');
    expect([await a.service.offer(completed('evt_7')), await b.service.offer(completed('evt_8'))]).toEqual([0, 0]);
    expect([a.audited, b.audited]).toEqual([
      ['webhook.created', 'webhook.disabled'],
      ['webhook.created', 'webhook.deleted'],
    ]);
    await Promise.all([a.subscribers.stop(), b.subscribers.stop()]);
  });

  it('still answers a change when its announcement cannot be published: this instance reads again, others when their cache expires', async () => {
    const stored = new Map<string, Subscriber[]>();
    const pubsub = strictFake<PubSub>('pubsub', {
      publish: async (channel) => {
        expect(channel).toBe(WEBHOOK_CHANGES_CHANNEL);
        throw new Error('Redis is away');
      },
    });
    const governance = instance(stored, pubsub);
    expect(await governance.service.offer(completed('evt_1'))).toBe(0);
    await governance.service.put(acme, 'hook', input());
    expect(await governance.service.offer(completed('evt_2'))).toBe(1);
    expect(governance.reads).toEqual(['acme', 'acme']);
  });
});

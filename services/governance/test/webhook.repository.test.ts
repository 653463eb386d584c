import { governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { sql, type Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture, sealingCipher } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookRepository, type SubscriptionInput } from '../src/webhooks/webhook.repository.js';

/**
 * Webhook subscriptions and deliveries on both engines: one delivery per (event, subscription),
 * leases that two workers never share and that a dead worker's successor takes over, attempts and
 * the failure count that disables a subscription.
 */
describe.each(SQL_ENGINES)('webhook repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<GovernanceDatabase>;
  let webhooks: ReturnType<typeof createWebhookRepository>;
  const input = (name: string, overrides: Partial<SubscriptionInput> = {}): SubscriptionInput => ({
    name,
    url: `https://hooks.example.com/${name}`,
    events: ['run.completed', 'webhook.test'],
    secretKey: 'Hangar:WebhookSecrets:main',
    headers: {},
    enabled: true,
    description: null,
    ...overrides,
  });
  const delivery = (subscriptionId: string, eventId: string) => ({
    subscriptionId,
    tenantId: 't1',
    eventId,
    eventType: 'run.completed',
    body: `{"id":"${eventId}"}`,
  });
  const outcome = (delivered: boolean, retryAt?: Date) => ({
    startedAt: new Date(),
    durationMs: 12,
    responseStatus: delivered ? 200 : 500,
    error: delivered ? null : 'the receiver answered HTTP 500',
    delivered,
    retryAt,
  });

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations)).db;
    webhooks = createWebhookRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates then replaces a subscription, tells which, keeps tenants apart, and deletes it with its deliveries', async () => {
    const created = await webhooks.putSubscription('t1', input('crud', { headers: { 'X-Team': 'a' } }));
    expect(created).toMatchObject({ created: true, subscription: { name: 'crud', headers: { 'X-Team': 'a' }, consecutiveFailures: 0 } });
    const replaced = await webhooks.putSubscription('t1', input('crud', { events: ['agent.created'] }));
    expect([replaced.created, replaced.subscription.events, replaced.subscription.id]).toEqual([
      false,
      ['agent.created'],
      created.subscription.id,
    ]);
    expect(await webhooks.getSubscription('t2', 'crud')).toBeUndefined();
    await webhooks.enqueue([delivery(created.subscription.id, 'evt_crud')]);
    expect(await webhooks.deleteSubscription('t2', 'crud')).toBe(false);
    expect(await webhooks.deleteSubscription('t1', 'crud')).toBe(true);
    expect(await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', 'evt_crud').execute()).toEqual([]);
  });

  it('finds the enabled subscriptions with the kinds they want, and queues an event once per subscription however often it is offered', async () => {
    const a = (await webhooks.putSubscription('t1', input('fan-a'))).subscription;
    const b = (await webhooks.putSubscription('t1', input('fan-b', { events: ['agent.created'] }))).subscription;
    const off = (await webhooks.putSubscription('t1', input('fan-off', { enabled: false }))).subscription;
    const enabled = await webhooks.enabledSubscriptions('t1');
    expect(enabled).toContainEqual({ id: a.id, events: a.events });
    expect(enabled).toContainEqual({ id: b.id, events: ['agent.created'] });
    expect(enabled.map((row) => row.id)).not.toContain(off.id);
    expect(await webhooks.enabledSubscriptions('t2')).toEqual([]);
    const first = await webhooks.enqueue([delivery(a.id, 'evt_once')]);
    expect(first).toHaveLength(1);
    expect(await webhooks.enqueue([delivery(a.id, 'evt_once')])).toEqual([]);
    const [listed] = await webhooks.listDeliveries('t1', 'fan-a', { skip: 0, take: 10 });
    expect(listed).toMatchObject({ id: first[0], eventId: 'evt_once', status: 'Pending', attempt: 0 });
    await webhooks.deleteSubscription('t1', 'fan-a');
  });

  it('leases a due delivery to one worker at a time; an expired lease is taken over and the first worker’s record is refused', async () => {
    const subscription = (await webhooks.putSubscription('t1', input('lease'))).subscription;
    const [id] = await webhooks.enqueue([delivery(subscription.id, 'evt_lease')]);
    const [claimed, rival] = await Promise.all([webhooks.claimDue('w1', 50, 60_000), webhooks.claimDue('w2', 50, 60_000)]);
    const mine = [...claimed, ...rival].filter((due) => due.id === id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ url: subscription.url, secretKey: subscription.secretKey, attempt: 0, body: '{"id":"evt_lease"}' });
    const holder = claimed.some((due) => due.id === id) ? 'w1' : 'w2';
    // The holder dies: its lease runs out, and another worker takes the delivery over.
    await db
      .updateTable('webhook_deliveries')
      .set({ lease_expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', id)
      .execute();
    const taken = (await webhooks.claimDue('w3', 50, 60_000)).filter((due) => due.id === id);
    expect(taken).toHaveLength(1);
    expect(await webhooks.recordAttempt(taken[0], holder, outcome(true), 20)).toEqual({ recorded: false, disabled: false });
    expect(await webhooks.recordAttempt(taken[0], 'w3', outcome(true), 20)).toEqual({ recorded: true, disabled: false });
    const detail = await webhooks.getDelivery('t1', 'lease', id);
    expect(detail).toMatchObject({ delivery: { status: 'Delivered', attempt: 1, responseStatus: 200, nextAttemptAt: null } });
    expect(detail!.attempts).toEqual([{ attempt: 1, startedAt: expect.any(String), durationMs: 12, responseStatus: 200, error: null }]);
    expect((await webhooks.claimDue('w4', 50, 60_000)).filter((due) => due.id === id)).toEqual([]);
  });

  it('plans a retry (not due before its time), abandons without one, and disables the subscription at the failure limit', async () => {
    const subscription = (await webhooks.putSubscription('t1', input('failing'))).subscription;
    const ids = await webhooks.enqueue([1, 2, 3].map((n) => delivery(subscription.id, `evt_fail_${n}`)));
    const due = (await webhooks.claimDue('w1', 50, 60_000)).filter((row) => ids.includes(row.id));
    expect(due).toHaveLength(3);
    expect(await webhooks.recordAttempt(due[0], 'w1', outcome(false, new Date(Date.now() + 60_000)), 3)).toEqual({
      recorded: true,
      disabled: false,
    });
    expect((await webhooks.getDelivery('t1', 'failing', due[0].id))!.delivery).toMatchObject({
      status: 'Failed',
      attempt: 1,
      nextAttemptAt: expect.any(String),
    });
    expect((await webhooks.claimDue('w1', 50, 60_000)).filter((row) => row.id === due[0].id)).toEqual([]);
    expect(await webhooks.recordAttempt(due[1], 'w1', outcome(false), 3)).toEqual({ recorded: true, disabled: false });
    expect((await webhooks.getDelivery('t1', 'failing', due[1].id))!.delivery).toMatchObject({ status: 'Abandoned', nextAttemptAt: null });
    expect(await webhooks.recordAttempt(due[2], 'w1', outcome(false, new Date()), 3)).toEqual({ recorded: true, disabled: true });
    expect(await webhooks.getSubscription('t1', 'failing')).toMatchObject({
      enabled: false,
      consecutiveFailures: 3,
      disabledAt: expect.any(String),
    });
    // A disabled subscription's due deliveries wait; enabling it clears the count and lets them go.
    expect((await webhooks.claimDue('w1', 50, 60_000)).filter((row) => row.id === due[2].id)).toEqual([]);
    expect((await webhooks.putSubscription('t1', input('failing'))).subscription).toMatchObject({
      enabled: true,
      consecutiveFailures: 0,
      disabledAt: null,
    });
    expect((await webhooks.claimDue('w1', 50, 60_000)).map((row) => row.id)).toContain(due[2].id);
    expect(await webhooks.listDeliveries('t1', 'failing', { status: 'Abandoned', skip: 0, take: 10 })).toHaveLength(1);
  });

  it('seals delivery bodies when content protection is on; the attempt and the detail read them as sent', async () => {
    const sealed = createWebhookRepository(db, sealingCipher());
    const subscription = (await sealed.putSubscription('t1', input('sealed'))).subscription;
    const [id] = await sealed.enqueue([{ ...delivery(subscription.id, 'evt_sealed'), body: '{"canary":"d41"}' }]);
    const row = await db.selectFrom('webhook_deliveries').select('body').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.body).toMatch(/^hgc1\.k1\./);
    expect((await sealed.claimDue('w9', 50, 60_000)).find((due) => due.id === id)?.body).toBe('{"canary":"d41"}');
    expect((await sealed.getDelivery('t1', 'sealed', id))?.body).toBe('{"canary":"d41"}');
  });
});

import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { jsonb, sql, type Kysely, type Selectable } from '@hangar/storage';
import type { GovernanceDatabase } from '../governance.database.js';
import type {
  AttemptOutcome,
  DeliveryAttempt,
  DeliveryStatus,
  DueDelivery,
  NewDelivery,
  Subscriber,
  SubscriptionInput,
  WebhookDatabase,
  WebhookDelivery,
  WebhookSubscription,
} from './webhook.model.js';

export type * from './webhook.model.js';

const toSubscription = (row: Selectable<WebhookDatabase['webhook_subscriptions']>): WebhookSubscription => ({
  id: row.id,
  name: row.name,
  url: row.url,
  events: row.events,
  secretKey: row.secret_key,
  headers: row.headers,
  enabled: row.enabled,
  description: row.description,
  consecutiveFailures: row.consecutive_failures,
  disabledAt: row.disabled_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const toDelivery = (row: Selectable<WebhookDatabase['webhook_deliveries']>): WebhookDelivery => ({
  id: row.id,
  eventId: row.event_id,
  eventType: row.event_type,
  attempt: row.attempt,
  status: row.status,
  responseStatus: row.response_status,
  error: row.error,
  nextAttemptAt: row.status === 'Pending' || row.status === 'Failed' ? row.next_attempt_at.toISOString() : null,
  createdAt: row.created_at.toISOString(),
  deliveredAt: row.delivered_at?.toISOString() ?? null,
});

/** The deliveries of one tenant's named subscription. */
const deliveriesOf = (db: Kysely<GovernanceDatabase>, tenantId: string, name: string) =>
  db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .selectAll('d')
    .where('s.tenant_id', '=', tenantId)
    .where('s.name', '=', name);

/**
 * Webhook subscriptions, their deliveries and each attempt (`webhook_*`). A delivery's body is
 * sealed with `cipher` when content protection is on.
 */
export function createWebhookRepository(db: Kysely<GovernanceDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const subscription = (tenantId: string, name: string) =>
    db.selectFrom('webhook_subscriptions').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name);

  return {
    /** Creates or replaces; enabling a subscription clears its failure count and disabled time. */
    async putSubscription(tenantId: string, input: SubscriptionInput): Promise<{ subscription: WebhookSubscription; created: boolean }> {
      const row = await db
        .insertInto('webhook_subscriptions')
        .values({
          tenant_id: tenantId,
          name: input.name,
          url: input.url,
          events: jsonb(input.events),
          secret_key: input.secretKey,
          headers: jsonb(input.headers),
          enabled: input.enabled,
          description: input.description,
          disabled_at: null,
        })
        .onConflict((conflict) =>
          conflict.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({
            url: eb.ref('excluded.url'),
            events: eb.ref('excluded.events'),
            secret_key: eb.ref('excluded.secret_key'),
            headers: eb.ref('excluded.headers'),
            enabled: eb.ref('excluded.enabled'),
            description: eb.ref('excluded.description'),
            // Only switching it on again clears the count: re-saving an enabled subscription (automation) does not.
            consecutive_failures: sql<number>`case when excluded.enabled and not webhook_subscriptions.enabled then 0 else webhook_subscriptions.consecutive_failures end`,
            disabled_at: sql<Date | null>`case when excluded.enabled then null else webhook_subscriptions.disabled_at end`,
            updated_at: sql<Date>`now()`,
          })),
        )
        .returningAll()
        // xmax is 0 for a row this statement inserted, not for one it updated.
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirstOrThrow();
      return { subscription: toSubscription(row), created: row.inserted };
    },

    async getSubscription(tenantId: string, name: string): Promise<WebhookSubscription | undefined> {
      const row = await subscription(tenantId, name).executeTakeFirst();
      return row && toSubscription(row);
    },

    async listSubscriptions(tenantId: string): Promise<WebhookSubscription[]> {
      const rows = await db.selectFrom('webhook_subscriptions').selectAll().where('tenant_id', '=', tenantId).orderBy('name').execute();
      return rows.map(toSubscription);
    },

    /** Deletes the subscription with its deliveries; false when there was none. */
    async deleteSubscription(tenantId: string, name: string): Promise<boolean> {
      const result = await db
        .deleteFrom('webhook_subscriptions')
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** The tenant's enabled subscriptions and the event kinds each wants. */
    async enabledSubscriptions(tenantId: string): Promise<Subscriber[]> {
      const rows = await db
        .selectFrom('webhook_subscriptions')
        .select(['id', 'events'])
        .where('tenant_id', '=', tenantId)
        .where('enabled', '=', true)
        .execute();
      return rows.map((row) => ({ id: row.id, events: row.events }));
    },

    /** Queues deliveries; one per (subscription, event) however often it is offered. The ids queued now. */
    async enqueue(deliveries: NewDelivery[]): Promise<string[]> {
      if (!deliveries.length) return [];
      const rows = await db
        .insertInto('webhook_deliveries')
        .values(
          deliveries.map((delivery) => ({
            subscription_id: delivery.subscriptionId,
            tenant_id: delivery.tenantId,
            event_id: delivery.eventId,
            event_type: delivery.eventType,
            body: cipher.seal(delivery.tenantId, 'WebhookPayloads', delivery.body),
            status: 'Pending' as const,
            response_status: null,
            error: null,
            lease_owner: null,
            lease_expires_at: null,
            delivered_at: null,
          })),
        )
        .onConflict((conflict) => conflict.columns(['subscription_id', 'event_id']).doNothing())
        .returning('id')
        .execute();
      return rows.map((row) => row.id);
    },

    /**
     * Leases up to `limit` deliveries whose attempt is due, to `owner` for `leaseMs`. A lease that
     * expired (its holder died mid-attempt) is taken over: the attempt is made again, same event id.
     */
    async claimDue(owner: string, limit: number, leaseMs: number): Promise<DueDelivery[]> {
      const rows = await db
        .updateTable('webhook_deliveries as d')
        .set({ lease_owner: owner, lease_expires_at: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
        .from('webhook_subscriptions as s')
        .whereRef('s.id', '=', 'd.subscription_id')
        .where('d.id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries as due')
            .innerJoin('webhook_subscriptions as sub', 'sub.id', 'due.subscription_id')
            .select('due.id')
            .where('due.status', 'in', ['Pending', 'Failed'])
            .where('due.next_attempt_at', '<=', sql<Date>`now()`)
            .where((where) => where.or([where('due.lease_expires_at', 'is', null), where('due.lease_expires_at', '<', sql<Date>`now()`)]))
            // A test is what an operator sends to check a subscription, also a disabled one.
            .where((where) => where.or([where('sub.enabled', '=', true), where('due.event_type', '=', 'webhook.test')]))
            .orderBy('due.next_attempt_at')
            .limit(limit)
            .forUpdate('due')
            .skipLocked(),
        )
        .returning([
          'd.id',
          'd.tenant_id',
          'd.subscription_id',
          's.name',
          'd.event_id',
          'd.body',
          'd.attempt',
          's.url',
          's.secret_key',
          's.headers',
        ])
        .execute();
      return rows.map((row) => ({
        id: row.id,
        tenantId: row.tenant_id,
        subscriptionId: row.subscription_id,
        subscriptionName: row.name,
        eventId: row.event_id,
        body: cipher.open(row.tenant_id, 'WebhookPayloads', row.body),
        attempt: row.attempt,
        url: row.url,
        secretKey: row.secret_key,
        headers: row.headers,
      }));
    },

    /**
     * Records an attempt made under `owner`'s lease and its effect on the subscription's failure
     * count: reset by a delivery, raised by a failure, the subscription disabled when the count
     * reaches `disableAfter`. False (nothing written) when the lease was lost meanwhile. `disabled`
     * tells whether this attempt disabled the subscription.
     */
    async recordAttempt(
      delivery: Pick<DueDelivery, 'id' | 'subscriptionId' | 'attempt'>,
      owner: string,
      outcome: AttemptOutcome,
      disableAfter: number,
    ): Promise<{ recorded: boolean; disabled: boolean }> {
      return db.transaction().execute(async (trx) => {
        const attempt = delivery.attempt + 1;
        const updated = await trx
          .updateTable('webhook_deliveries')
          .set({
            attempt,
            status: outcome.delivered ? 'Delivered' : outcome.retryAt ? 'Failed' : 'Abandoned',
            response_status: outcome.responseStatus,
            error: outcome.error,
            next_attempt_at: outcome.retryAt ?? sql<Date>`next_attempt_at`,
            delivered_at: outcome.delivered ? sql<Date>`now()` : null,
            lease_owner: null,
            lease_expires_at: null,
          })
          .where('id', '=', delivery.id)
          .where('lease_owner', '=', owner)
          .executeTakeFirst();
        if (updated.numUpdatedRows === 0n) return { recorded: false, disabled: false };
        await trx
          .insertInto('webhook_delivery_attempts')
          .values({
            delivery_id: delivery.id,
            attempt,
            started_at: outcome.startedAt,
            duration_ms: Math.round(outcome.durationMs),
            response_status: outcome.responseStatus,
            error: outcome.error,
          })
          .execute();
        if (outcome.delivered) {
          await trx
            .updateTable('webhook_subscriptions')
            .set({ consecutive_failures: 0 })
            .where('id', '=', delivery.subscriptionId)
            .execute();
          return { recorded: true, disabled: false };
        }
        const counted = await trx
          .updateTable('webhook_subscriptions')
          .set({
            // Attempts that were under way when the subscription was disabled do not count.
            consecutive_failures: sql<number>`case when enabled then consecutive_failures + 1 else consecutive_failures end`,
            enabled: sql<boolean>`enabled and consecutive_failures + 1 < ${disableAfter}`,
            disabled_at: sql<Date | null>`case when enabled and consecutive_failures + 1 >= ${disableAfter} then now() else disabled_at end`,
          })
          .where('id', '=', delivery.subscriptionId)
          .returning(sql<boolean>`disabled_at = now()`.as('disabledNow'))
          .executeTakeFirst();
        return { recorded: true, disabled: counted?.disabledNow === true };
      });
    },

    async listDeliveries(
      tenantId: string,
      name: string,
      filter: { status?: DeliveryStatus; skip: number; take: number },
    ): Promise<WebhookDelivery[]> {
      const rows = await deliveriesOf(db, tenantId, name)
        .$if(filter.status !== undefined, (query) => query.where('d.status', '=', filter.status!))
        .orderBy('d.created_at', 'desc')
        .orderBy('d.id')
        .offset(filter.skip)
        .limit(filter.take)
        .execute();
      return rows.map(toDelivery);
    },

    /** One delivery of the named subscription with its attempts, oldest first. */
    async getDelivery(
      tenantId: string,
      name: string,
      id: string,
    ): Promise<{ delivery: WebhookDelivery; body: string; attempts: DeliveryAttempt[] } | undefined> {
      // One snapshot: the delivery's state and its attempts agree even while an attempt is being recorded.
      const read = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const row = await deliveriesOf(trx, tenantId, name).where('d.id', '=', id).executeTakeFirst();
          if (!row) return undefined;
          const attempts = await trx
            .selectFrom('webhook_delivery_attempts')
            .selectAll()
            .where('delivery_id', '=', id)
            .orderBy('attempt')
            .execute();
          return { row, attempts };
        });
      if (!read) return undefined;
      const { row, attempts } = read;
      return {
        delivery: toDelivery(row),
        body: cipher.open(tenantId, 'WebhookPayloads', row.body),
        attempts: attempts.map((attempt) => ({
          attempt: attempt.attempt,
          startedAt: attempt.started_at.toISOString(),
          durationMs: attempt.duration_ms,
          responseStatus: attempt.response_status,
          error: attempt.error,
        })),
      };
    },
  };
}

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;

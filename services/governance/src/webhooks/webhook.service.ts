import { WEBHOOK_EVENT_KINDS, type WebhookEventKind } from '@hangar/contracts';
import { randomUUID } from 'node:crypto';
import {
  checkEgressTarget,
  clampPage,
  conflict,
  notFound,
  validationError,
  type AuditWriter,
  type Caller,
  type EgressPolicy,
  type FieldError,
  RECORD_NAME,
} from '@hangar/platform';
import type { SubscriberCache } from './subscriber-cache.js';
import { eventIdOf, RESERVED_HEADER } from './webhook-signing.js';
import type { DeliveryStatus, DueDelivery, SubscriptionInput, WebhookRepository, WebhookSubscription } from './webhook.repository.js';

export interface WebhookSettings {
  /** `Webhooks:AllowedConfigurationPrefix`: where a subscription's `secretKey` must point. */
  secretKeyPrefix: string;
  maxExtraHeaders: number;
  /** Either egress key, and `Webhooks:AllowInsecureHttp`. */
  egress: EgressPolicy;
  /** `Webhooks:Enabled`: while false, nothing is queued (it would never be sent). */
  delivering: boolean;
}

/** An event on its way to subscribers: `data` is built only when some subscription wants it. */
export interface WebhookEvent {
  id: string;
  tenantId: string;
  type: WebhookEventKind;
  timestamp: string;
  data: () => Promise<unknown> | unknown;
}

export interface WebhookServiceDeps {
  repository: WebhookRepository;
  /** Who an event is offered to, and where a change of a tenant's subscriptions is told. */
  subscribers: Pick<SubscriberCache, 'subscribers' | 'changed'>;
  audit: AuditWriter;
  /** Deliveries were queued: attempt them now. */
  queued: () => void;
  settings: WebhookSettings;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const MAX_URL_LENGTH = 2048;

/** Subscriptions of a tenant, the events they are offered, and the delivery log they can read. */
export function createWebhookService(deps: WebhookServiceDeps) {
  const { repository, settings } = deps;

  async function existing(caller: Caller, name: string): Promise<WebhookSubscription> {
    const subscription = RECORD_NAME.test(name) ? await repository.getSubscription(caller.tenantId, name) : undefined;
    if (!subscription) throw notFound(`webhook "${name}" not found`);
    return subscription;
  }

  /** The subscription as it may be stored: refused with every reason at once; headers Hangar sets itself dropped. */
  function checked(name: string, input: SubscriptionInput): SubscriptionInput {
    const errors: FieldError[] = [];
    if (!RECORD_NAME.test(name))
      errors.push({ path: 'name', message: 'must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
    if (input.url.length > MAX_URL_LENGTH) errors.push({ path: 'url', message: `must be at most ${MAX_URL_LENGTH} characters` });
    else {
      const target = checkEgressTarget(input.url, settings.egress);
      if (!target.ok) errors.push({ path: 'url', message: target.reason });
    }
    if (!input.events.length) errors.push({ path: 'events', message: 'must name at least one event kind' });
    for (const [index, kind] of input.events.entries()) {
      if (!(WEBHOOK_EVENT_KINDS as readonly string[]).includes(kind))
        errors.push({ path: `events.${index}`, message: `must be one of ${WEBHOOK_EVENT_KINDS.join(', ')}` });
    }
    if (!input.secretKey.startsWith(settings.secretKeyPrefix) || input.secretKey.length === settings.secretKeyPrefix.length) {
      errors.push({
        path: 'secretKey',
        message: `must name a configuration key under "${settings.secretKeyPrefix}" (Webhooks:AllowedConfigurationPrefix)`,
      });
    }
    const headers = Object.fromEntries(Object.entries(input.headers).filter(([header]) => !RESERVED_HEADER.test(header)));
    if (Object.keys(headers).length > settings.maxExtraHeaders)
      errors.push({ path: 'headers', message: `at most ${settings.maxExtraHeaders} headers (Webhooks:MaxExtraHeaders)` });
    for (const [header, value] of Object.entries(headers)) {
      if (!HEADER_NAME.test(header)) errors.push({ path: `headers.${header}`, message: 'is not a valid header name' });
      else if (/[\r\n\0]/.test(value) || value.length > 8192)
        errors.push({ path: `headers.${header}`, message: 'must be at most 8192 characters without line breaks' });
    }
    if (errors.length) throw validationError(`the webhook "${name}" is not valid`, errors);
    return { ...input, name, events: [...new Set(input.events)], headers };
  }

  return {
    async put(caller: Caller, name: string, input: SubscriptionInput) {
      const saved = await repository.putSubscription(caller.tenantId, checked(name, input));
      await deps.subscribers.changed(caller.tenantId);
      // Deliveries that waited while it was disabled go out now, not at the next poll.
      if (saved.subscription.enabled) deps.queued();
      await deps.audit(caller, {
        action: saved.created ? 'webhook.created' : 'webhook.updated',
        resourceType: 'webhook',
        resourceId: name,
        // Where events go (without a query: it may carry the receiver's token) and which key NAME signs them.
        details: { url: input.url.split('?')[0], events: saved.subscription.events, secretKey: input.secretKey, enabled: input.enabled },
      });
      return saved;
    },

    get: existing,

    list: (caller: Caller) => repository.listSubscriptions(caller.tenantId),

    async delete(caller: Caller, name: string): Promise<void> {
      if (!RECORD_NAME.test(name) || !(await repository.deleteSubscription(caller.tenantId, name)))
        throw notFound(`webhook "${name}" not found`);
      await deps.subscribers.changed(caller.tenantId);
      await deps.audit(caller, { action: 'webhook.deleted', resourceType: 'webhook', resourceId: name, details: {} });
    },

    /** Queues a `webhook.test` delivery to the subscription (enabled or not: it is what an operator checks). */
    async test(caller: Caller, name: string): Promise<string> {
      const subscription = await existing(caller, name);
      if (!settings.delivering) throw conflict('webhooks are switched off here (Webhooks:Enabled is false): nothing would be sent');
      const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} });
      const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
      const [id] = await repository.enqueue([
        { subscriptionId: subscription.id, tenantId: caller.tenantId, eventId, eventType: 'webhook.test', body },
      ]);
      deps.queued();
      return id;
    },

    async deliveries(caller: Caller, name: string, filter: { status?: DeliveryStatus; skip: number; take: number }) {
      await existing(caller, name);
      return repository.listDeliveries(caller.tenantId, name, { status: filter.status, ...clampPage(filter.skip, filter.take) });
    },

    async delivery(caller: Caller, name: string, id: string) {
      const found = /^[0-9a-f-]{36}$/i.test(id) ? await repository.getDelivery(caller.tenantId, name, id) : undefined;
      if (!found) throw notFound(`delivery ${id} of webhook "${name}" not found`);
      return found;
    },

    /** The delivery worker disabled the subscription after its failures: offers stop here at once, elsewhere once announced. */
    async disabledByFailures(delivery: Pick<DueDelivery, 'tenantId' | 'subscriptionName'>, reason: string): Promise<void> {
      await deps.subscribers.changed(delivery.tenantId);
      await deps.audit(
        { tenantId: delivery.tenantId, actor: 'governance-webhooks' },
        { action: 'webhook.disabled', resourceType: 'webhook', resourceId: delivery.subscriptionName, details: { reason } },
      );
    },

    /** Another service's event for the caller's tenant (the evaluation service's canary rollbacks); its id makes it once. */
    async offerFrom(caller: Caller, event: { id: string; type: string; data: Record<string, unknown> }): Promise<number> {
      if (!(WEBHOOK_EVENT_KINDS as readonly string[]).includes(event.type)) {
        throw validationError(`unknown webhook event kind "${event.type}"`, [
          { path: 'type', message: `must be one of ${WEBHOOK_EVENT_KINDS.join(', ')}` },
        ]);
      }
      return this.offer({
        id: eventIdOf(`${caller.tenantId}:${event.id}`),
        tenantId: caller.tenantId,
        type: event.type as WebhookEventKind,
        timestamp: new Date().toISOString(),
        data: () => event.data,
      });
    },

    /** Queues the event for every enabled subscription of its tenant that wants its kind (none: nothing is built). */
    async offer(event: WebhookEvent): Promise<number> {
      if (!settings.delivering) return 0;
      const subscribers = await deps.subscribers.subscribers(event.tenantId, event.type);
      if (!subscribers.length) return 0;
      const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: await event.data() });
      const queued = await repository.enqueue(
        subscribers.map((subscriber) => ({
          subscriptionId: subscriber.id,
          tenantId: event.tenantId,
          eventId: event.id,
          eventType: event.type,
          body,
        })),
      );
      if (queued.length) deps.queued();
      return queued.length;
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;

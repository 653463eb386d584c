import { WEBHOOK_CHANGES_CHANNEL } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import type { Logger } from '@hangar/platform';
import type { Subscriber, WebhookRepository } from './webhook.repository.js';

/**
 * How long a tenant's subscribers are trusted: the longest a change made by another governance
 * instance takes to reach this one's offers when its announcement is lost.
 */
export const SUBSCRIBER_CACHE_MS = 30_000;

/**
 * The enabled subscriptions of each tenant as events are offered to them: kept until a change of
 * the tenant's subscriptions is announced (announced before the change is answered, and seen at
 * once by the process that made it) or the TTL passes, so offering a run's outcome reads no
 * subscription from the store. docs/decisions.md "Webhook subscribers, cached".
 */
export function createSubscriberCache(deps: {
  repository: Pick<WebhookRepository, 'enabledSubscriptions'>;
  pubsub: PubSub;
  logger: Logger;
}) {
  const cache = createAnnouncedCache<Subscriber[]>({
    pubsub: deps.pubsub,
    channel: WEBHOOK_CHANGES_CHANNEL,
    ttlMs: SUBSCRIBER_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn(
        { err: error },
        `webhook subscription changes cannot be heard; another instance's change reaches offers here within ${SUBSCRIBER_CACHE_MS} ms`,
      ),
  });
  return {
    /** The tenant's enabled subscriptions that want `eventType`. */
    async subscribers(tenantId: string, eventType: string): Promise<Array<{ id: string }>> {
      const enabled = await cache.get(tenantId, () => deps.repository.enabledSubscriptions(tenantId));
      return enabled.filter((subscription) => subscription.events.includes(eventType));
    },
    /** The tenant's subscriptions changed here: this process reads them again at once, the others once the announcement reaches them. */
    async changed(tenantId: string): Promise<void> {
      cache.forget(tenantId);
      await deps.pubsub.publish(WEBHOOK_CHANGES_CHANNEL, JSON.stringify({ id: tenantId })).catch((error) => {
        deps.logger.warn(
          { err: error, tenantId },
          'a webhook subscription change could not be announced; other instances learn it when their cache expires',
        );
      });
    },
    start: cache.start,
    stop: cache.stop,
  };
}

export type SubscriberCache = ReturnType<typeof createSubscriberCache>;

import {
  WEBHOOK_DELIVERY_STATUSES,
  webhookDeliveryStatusFromProto,
  webhookDeliveryStatusToProto,
  webhookPb as pb,
  type WebhookDeliveryStatusName,
} from '@hangar/contracts';
import { validationError, type CallerContext } from '@hangar/platform';
import type { WebhookDelivery, WebhookSubscription } from './webhook.repository.js';
import type { WebhookService } from './webhook.service.js';

const statusFromProto = (status: pb.WebhookDeliveryStatus): WebhookDeliveryStatusName | undefined => {
  if (status === pb.WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED) return undefined;
  const found = webhookDeliveryStatusFromProto(status);
  if (!found)
    throw validationError('unknown delivery status', [
      { path: 'status', message: `must be one of ${WEBHOOK_DELIVERY_STATUSES.join(', ')}` },
    ]);
  return found;
};

const webhookToProto = (subscription: WebhookSubscription): pb.Webhook => ({
  name: subscription.name,
  url: subscription.url,
  events: subscription.events,
  secretKey: subscription.secretKey,
  headers: subscription.headers,
  enabled: subscription.enabled,
  description: subscription.description ?? undefined,
  createdAt: subscription.createdAt,
  updatedAt: subscription.updatedAt,
  consecutiveFailures: subscription.consecutiveFailures,
  disabledAt: subscription.disabledAt ?? undefined,
});

const deliveryToProto = (delivery: WebhookDelivery): pb.WebhookDelivery => ({
  id: delivery.id,
  eventId: delivery.eventId,
  eventType: delivery.eventType,
  attempt: delivery.attempt,
  status: webhookDeliveryStatusToProto(delivery.status),
  responseStatus: delivery.responseStatus ?? undefined,
  error: delivery.error ?? undefined,
  nextAttemptAt: delivery.nextAttemptAt ?? undefined,
  createdAt: delivery.createdAt,
  deliveredAt: delivery.deliveredAt ?? undefined,
});

/** gRPC ↔ webhook rules; translation only. */
export function webhookGrpc(webhooks: WebhookService): pb.WebhookServiceImplementation<CallerContext> {
  return {
    async putWebhook(request, { caller }) {
      const { subscription, created } = await webhooks.put(caller, request.name, {
        name: request.name,
        url: request.url,
        events: request.events,
        secretKey: request.secretKey,
        headers: request.headers,
        enabled: request.enabled,
        description: request.description ?? null,
      });
      return { webhook: webhookToProto(subscription), created };
    },
    async getWebhook({ name }, { caller }) {
      return { webhook: webhookToProto(await webhooks.get(caller, name)) };
    },
    async listWebhooks(_, { caller }) {
      return { webhooks: (await webhooks.list(caller)).map(webhookToProto) };
    },
    async deleteWebhook({ name }, { caller }) {
      await webhooks.delete(caller, name);
      return {};
    },
    async offerWebhookEvent({ id, type, data }, { caller }) {
      await webhooks.offerFrom(caller, { id, type, data: data ?? {} });
      return {};
    },
    async testWebhook({ name }, { caller }) {
      return { deliveryId: await webhooks.test(caller, name) };
    },
    async listWebhookDeliveries(request, { caller }) {
      const deliveries = await webhooks.deliveries(caller, request.name, {
        status: statusFromProto(request.status),
        skip: request.skip,
        take: request.take || 50,
      });
      return { deliveries: deliveries.map(deliveryToProto) };
    },
    async getWebhookDelivery({ name, id }, { caller }) {
      const { delivery, body, attempts } = await webhooks.delivery(caller, name, id);
      return {
        delivery: deliveryToProto(delivery),
        attempts: attempts.map((attempt) => ({
          attempt: attempt.attempt,
          startedAt: attempt.startedAt,
          durationMs: attempt.durationMs,
          responseStatus: attempt.responseStatus ?? undefined,
          error: attempt.error ?? undefined,
        })),
        payload: JSON.parse(body),
      };
    },
  };
}

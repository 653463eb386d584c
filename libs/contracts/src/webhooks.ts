import { WebhookDeliveryStatus } from './generated/hangar/v1/webhooks.js';

/** API.md "Webhooks": the event kinds a subscription can ask for. */
export const WEBHOOK_EVENT_KINDS = [
  'run.completed',
  'run.failed',
  'run.canceled',
  'agent.created',
  'agent.updated',
  'agent.deleted',
  'quota.threshold',
  'approval.requested',
  'canary.rolled-back',
  'webhook.test',
] as const;

export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

/**
 * Pub/sub channel on which governance announces that a tenant's webhook subscriptions changed
 * (`{ id }`: the tenant): created, replaced, deleted, or disabled by failures. Governance instances
 * then read the tenant's subscribers again.
 */
export const WEBHOOK_CHANGES_CHANNEL = 'hangar.webhooks.changed';

/** Pending (not tried yet) → Delivered, or Failed (a retry is planned) → … → Delivered | Abandoned. */
export const WEBHOOK_DELIVERY_STATUSES = ['Pending', 'Delivered', 'Failed', 'Abandoned'] as const;

export type WebhookDeliveryStatusName = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

const TO_PROTO: Record<WebhookDeliveryStatusName, WebhookDeliveryStatus> = {
  Pending: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_PENDING,
  Delivered: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_DELIVERED,
  Failed: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_FAILED,
  Abandoned: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_ABANDONED,
};

export const webhookDeliveryStatusToProto = (status: WebhookDeliveryStatusName): WebhookDeliveryStatus => TO_PROTO[status];

/** The name of a proto status; undefined for UNSPECIFIED or a value this version does not know. */
export const webhookDeliveryStatusFromProto = (status: WebhookDeliveryStatus): WebhookDeliveryStatusName | undefined =>
  WEBHOOK_DELIVERY_STATUSES.find((name) => TO_PROTO[name] === status);

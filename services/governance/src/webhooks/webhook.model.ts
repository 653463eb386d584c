import type { WebhookDeliveryStatusName as DeliveryStatus } from '@hangar/contracts';
import type { Generated } from '@hangar/storage';

export type { DeliveryStatus };

/** The webhook tables and the shapes the feature's rules and transport share. */
export interface WebhookDatabase {
  webhook_subscriptions: {
    id: Generated<string>;
    tenant_id: string;
    name: string;
    url: string;
    events: string[];
    secret_key: string;
    headers: Record<string, string>;
    enabled: boolean;
    description: string | null;
    consecutive_failures: Generated<number>;
    disabled_at: Date | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  webhook_deliveries: {
    id: Generated<string>;
    subscription_id: string;
    tenant_id: string;
    event_id: string;
    event_type: string;
    /** The exact JSON body every attempt sends, so retries carry the same bytes. */
    body: string;
    attempt: Generated<number>;
    status: DeliveryStatus;
    response_status: number | null;
    error: string | null;
    next_attempt_at: Generated<Date>;
    lease_owner: string | null;
    lease_expires_at: Date | null;
    created_at: Generated<Date>;
    delivered_at: Date | null;
  };
  webhook_delivery_attempts: {
    delivery_id: string;
    attempt: number;
    started_at: Date;
    duration_ms: number;
    response_status: number | null;
    error: string | null;
  };
}

export interface WebhookSubscription {
  id: string;
  name: string;
  url: string;
  events: string[];
  secretKey: string;
  headers: Record<string, string>;
  enabled: boolean;
  description: string | null;
  consecutiveFailures: number;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** An enabled subscription as events are offered to it: which kinds it wants. */
export interface Subscriber {
  id: string;
  events: string[];
}

export type SubscriptionInput = Pick<WebhookSubscription, 'name' | 'url' | 'events' | 'secretKey' | 'headers' | 'enabled' | 'description'>;

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  error: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
}

/** A delivery leased for an attempt, with what the attempt needs of its subscription. */
export interface DueDelivery {
  id: string;
  tenantId: string;
  subscriptionId: string;
  subscriptionName: string;
  eventId: string;
  body: string;
  /** Attempts made before this one. */
  attempt: number;
  url: string;
  secretKey: string;
  headers: Record<string, string>;
}

export interface NewDelivery {
  subscriptionId: string;
  tenantId: string;
  eventId: string;
  eventType: string;
  body: string;
}

/** How an attempt ended: delivered, retried at `retryAt`, or abandoned (no `retryAt`). */
export interface AttemptOutcome {
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
  delivered: boolean;
  retryAt?: Date;
}

import { sql, type PurgeTarget } from '@hangar/storage';

/** The retention targets governance's own tables hold (SPEC Limits "Retention"). */
export const GOVERNANCE_RETENTION_TARGETS: Record<'WebhookDeliveries' | 'IdempotencyKeys', PurgeTarget> = {
  // Delivered rows only: a delivery still being retried, or abandoned, is what an operator looks into.
  WebhookDeliveries: {
    table: 'webhook_deliveries',
    key: ['id'],
    older: (cutoff) => sql<boolean>`status = 'Delivered' and delivered_at < ${cutoff}`,
  },
  // Past their replay window as well as older than the cutoff: a key still answering replays stays.
  IdempotencyKeys: {
    table: 'idempotency_keys',
    key: ['tenant_id', 'scope', 'key'],
    older: (cutoff) => sql<boolean>`created_at < ${cutoff} and expires_at <= now()`,
  },
};

import type { ApiKeyDatabase } from './api-keys/api-key.repository.js';
import type { AuditDatabase } from './audit.repository.js';
import type { IdempotencyDatabase } from './idempotency.repository.js';
import type { QuotaDatabase } from './quota.repository.js';
import type { RetentionDatabase } from './retention/retention.repository.js';
import type { TenantDatabase } from './tenants/tenant.repository.js';
import type { WebhookDatabase } from './webhooks/webhook.repository.js';

/** Every table of the governance schema. */
export type GovernanceDatabase = AuditDatabase &
  IdempotencyDatabase &
  QuotaDatabase &
  ApiKeyDatabase &
  TenantDatabase &
  WebhookDatabase &
  RetentionDatabase;

import type { SealedColumn } from '@hangar/platform';
import { sql } from '@hangar/storage';

const tenant = () => sql<string>`t.tenant_id`;

/** Governance's protected columns, for the re-encryption job. */
export const GOVERNANCE_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'idempotency_keys',
    key: ['tenant_id', 'scope', 'key'],
    column: 'response',
    protects: 'IdempotencyResponses',
    json: true,
    tenant,
  },
  { table: 'webhook_deliveries', key: ['id'], column: 'body', protects: 'WebhookPayloads', json: false, tenant },
];

import type { SealedColumn } from '@hangar/platform';
import { sql } from '@hangar/storage';

const tenant = () => sql<string>`t.tenant_id`;

/** The session service's protected columns, for the re-encryption job. */
export const SESSION_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'session_messages',
    key: ['tenant_id', 'session_id', 'sequence'],
    column: 'content',
    protects: 'SessionMessages',
    json: true,
    tenant,
  },
  { table: 'sessions', key: ['tenant_id', 'id'], column: 'state', protects: 'SessionState', json: true, tenant },
];

import type { SealedColumn } from '@hangar/platform';
import { sql } from '@hangar/storage';

/** The attachment service's protected column, for the re-encryption job. */
export const ATTACHMENT_SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'attachments',
    key: ['id'],
    column: 'file_name',
    protects: 'AttachmentFileNames',
    json: false,
    tenant: () => sql<string>`t.tenant_id`,
  },
];

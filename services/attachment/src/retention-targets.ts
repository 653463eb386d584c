import { sql, type PurgeTarget } from '@hangar/storage';

/**
 * SPEC Retention `Attachments` (orphaned rows): uploads that never completed. A completed
 * attachment is deleted by its owner or with its session, never by age alone.
 */
export const ATTACHMENT_RETENTION_TARGETS: Record<'Attachments', PurgeTarget> = {
  Attachments: { table: 'attachments', key: ['id'], older: (cutoff) => sql<boolean>`status = 'uploading' and created_at < ${cutoff}` },
};

import { sql, type PurgeTarget } from '@hangar/storage';

/** SPEC Retention `DocumentEmbeddings` (off by default): documents uploaded before the cutoff, with their embedded chunks. */
export const KNOWLEDGE_RETENTION_TARGETS: Record<'DocumentEmbeddings', PurgeTarget> = {
  DocumentEmbeddings: { table: 'documents', key: ['tenant_id', 'id'], older: (cutoff) => sql<boolean>`created_at < ${cutoff}` },
};

import { sql, type PurgeTarget } from '@hangar/storage';

/** SPEC Retention `Sessions` (off by default): sessions not written to since the cutoff, with their messages. */
export const SESSION_RETENTION_TARGETS: Record<'Sessions', PurgeTarget> = {
  Sessions: { table: 'sessions', key: ['tenant_id', 'id'], older: (cutoff) => sql<boolean>`updated_at < ${cutoff}` },
};

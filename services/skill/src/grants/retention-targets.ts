import { sql, type PurgeTarget } from '@hangar/storage';

/** SPEC Retention `SkillScriptGrants`: grants that expired or were revoked before the cutoff. */
export const SKILL_RETENTION_TARGETS: Record<'SkillScriptGrants', PurgeTarget> = {
  SkillScriptGrants: {
    table: 'skill_script_grants',
    key: ['id'],
    older: (cutoff) => sql<boolean>`(expires_at < ${cutoff} or revoked_at < ${cutoff})`,
  },
};

import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from '@hangar/storage';
import type { SkillDatabase } from '../skills/skill.repository.js';
import type { Grant } from './grant.model.js';

type GrantRow = SkillDatabase['skill_script_grants'] & { created_at: Date };

/** Revoked wins; otherwise a grant past its expiry is Expired, against the clock of `now`. */
const toGrant = (row: GrantRow, now: Date): Grant => ({
  id: row.id,
  skillName: row.skill_name,
  scriptName: row.script_name,
  expiresAt: row.expires_at?.toISOString() ?? null,
  status: row.revoked_at ? 'Revoked' : row.expires_at && row.expires_at <= now ? 'Expired' : 'Active',
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
  revokedAt: row.revoked_at?.toISOString() ?? null,
});

/** A grant in force now: not revoked, and no expiry or one still ahead. */
const inForce = sql<boolean>`revoked_at is null and (expires_at is null or expires_at > now())`;

/** Every SQL statement about skill script grants. */
export function createGrantRepository(db: Kysely<SkillDatabase>) {
  return {
    async list(tenantId: string): Promise<Grant[]> {
      const rows = await db
        .selectFrom('skill_script_grants')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      const now = new Date();
      return rows.map((row) => toGrant(row as GrantRow, now));
    },

    async create(
      tenantId: string,
      grant: { skillName: string; scriptName: string | null; expiresAt: Date | null; createdBy: string },
    ): Promise<Grant> {
      const row = await db
        .insertInto('skill_script_grants')
        .values({
          id: randomUUID(),
          tenant_id: tenantId,
          skill_name: grant.skillName,
          script_name: grant.scriptName,
          expires_at: grant.expiresAt,
          created_by: grant.createdBy,
          revoked_at: null,
          revoked_by: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toGrant(row as GrantRow, new Date());
    },

    /**
     * Revokes the grants in force that were created the same way: for the whole skill when
     * `scriptName` is null, for that script only otherwise. The revoked ones, none when no grant matched.
     */
    async revoke(tenantId: string, skillName: string, scriptName: string | null, revokedBy: string): Promise<Grant[]> {
      const rows = await db
        .updateTable('skill_script_grants')
        .set({ revoked_at: sql`now()`, revoked_by: revokedBy })
        .where('tenant_id', '=', tenantId)
        .where('skill_name', '=', skillName)
        .where((where) => (scriptName === null ? where('script_name', 'is', null) : where('script_name', '=', scriptName)))
        .where(inForce)
        .returningAll()
        .execute();
      const now = new Date();
      return rows.map((row) => toGrant(row as GrantRow, now));
    },

    /** Whether a grant in force covers the script right now: one for the whole skill or for that script. */
    async covers(tenantId: string, skillName: string, scriptName: string): Promise<boolean> {
      const row = await db
        .selectFrom('skill_script_grants')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('skill_name', '=', skillName)
        .where((where) => where.or([where('script_name', 'is', null), where('script_name', '=', scriptName)]))
        .where(inForce)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type GrantRepository = ReturnType<typeof createGrantRepository>;

import type { Generated, Kysely } from '@hangar/storage';

export interface SkillDatabase {
  skills: {
    tenant_id: string;
    name: string;
    description: string;
    compatibility: string | null;
    instructions: string;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
}

/** Every SQL statement of the skill service. */
export function createSkillRepository(db: Kysely<SkillDatabase>) {
  return {
    async existingNames(tenantId: string, names: string[]): Promise<string[]> {
      if (names.length === 0) return [];
      const rows = await db.selectFrom('skills').select('name').where('tenant_id', '=', tenantId).where('name', 'in', names).execute();
      return rows.map((row) => row.name);
    },
  };
}

export type SkillRepository = ReturnType<typeof createSkillRepository>;

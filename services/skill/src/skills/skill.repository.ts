import { sql, type Generated, type Kysely } from '@hangar/storage';
import type { Skill, SkillInput } from './skill.model.js';

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
  skill_resources: { tenant_id: string; skill_name: string; position: number; name: string; content: string };
  skill_scripts: { tenant_id: string; skill_name: string; position: number; name: string; extension: string; content: string };
  skill_script_grants: {
    id: string;
    tenant_id: string;
    skill_name: string;
    script_name: string | null;
    expires_at: Date | null;
    created_at: Generated<Date>;
    created_by: string;
    revoked_at: Date | null;
    revoked_by: string | null;
  };
}

/** Every SQL statement about stored skills. */
export function createSkillRepository(db: Kysely<SkillDatabase>) {
  /** The skills named (all when `names` is undefined) with their resources and scripts, by name. */
  async function load(tenantId: string, names?: string[]): Promise<Skill[]> {
    if (names?.length === 0) return [];
    const skills = await db
      .selectFrom('skills')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$if(names !== undefined, (query) => query.where('name', 'in', names!))
      .orderBy('name')
      .execute();
    if (!skills.length) return [];
    const skillNames = skills.map((skill) => skill.name);
    const [resources, scripts] = await Promise.all([
      db
        .selectFrom('skill_resources')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('skill_name', 'in', skillNames)
        .orderBy('position')
        .execute(),
      db
        .selectFrom('skill_scripts')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('skill_name', 'in', skillNames)
        .orderBy('position')
        .execute(),
    ]);
    return skills.map((skill) => ({
      name: skill.name,
      description: skill.description,
      compatibility: skill.compatibility,
      instructions: skill.instructions,
      resources: resources.filter((row) => row.skill_name === skill.name).map((row) => ({ name: row.name, content: row.content })),
      scripts: scripts
        .filter((row) => row.skill_name === skill.name)
        .map((row) => ({ name: row.name, extension: row.extension, content: row.content })),
      createdAt: skill.created_at.toISOString(),
      updatedAt: skill.updated_at.toISOString(),
      onDisk: false,
      directory: null,
    }));
  }

  return {
    existingNames: async (tenantId: string, names: string[]) =>
      names.length === 0
        ? []
        : (await db.selectFrom('skills').select('name').where('tenant_id', '=', tenantId).where('name', 'in', names).execute()).map(
            (row) => row.name,
          ),

    list: (tenantId: string) => load(tenantId),

    get: async (tenantId: string, name: string): Promise<Skill | undefined> => (await load(tenantId, [name]))[0],

    /** Replaces the whole skill in one transaction; `created` is true on its first save. */
    async save(tenantId: string, skill: SkillInput): Promise<{ skill: Skill; created: boolean }> {
      const created = await db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('skills')
          .values({
            tenant_id: tenantId,
            name: skill.name,
            description: skill.description,
            compatibility: skill.compatibility,
            instructions: skill.instructions,
          })
          .onConflict((conflict) =>
            conflict.columns(['tenant_id', 'name']).doUpdateSet({
              description: skill.description,
              compatibility: skill.compatibility,
              instructions: skill.instructions,
              updated_at: sql`now()`,
            }),
          )
          // xmax is 0 on a row this statement inserted, and set on one it updated.
          .returning(sql<boolean>`xmax = 0`.as('inserted'))
          .executeTakeFirstOrThrow();
        for (const table of ['skill_resources', 'skill_scripts'] as const)
          await trx.deleteFrom(table).where('tenant_id', '=', tenantId).where('skill_name', '=', skill.name).execute();
        if (skill.resources.length)
          await trx
            .insertInto('skill_resources')
            .values(skill.resources.map((resource, position) => ({ tenant_id: tenantId, skill_name: skill.name, position, ...resource })))
            .execute();
        if (skill.scripts.length)
          await trx
            .insertInto('skill_scripts')
            .values(skill.scripts.map((script, position) => ({ tenant_id: tenantId, skill_name: skill.name, position, ...script })))
            .execute();
        return row.inserted;
      });
      return { skill: (await load(tenantId, [skill.name]))[0], created };
    },

    /** Deletes the skill with its resources and scripts; false when there was none. */
    async delete(tenantId: string, name: string): Promise<boolean> {
      const result = await db.deleteFrom('skills').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export type SkillRepository = ReturnType<typeof createSkillRepository>;

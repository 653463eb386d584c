import type { Caller } from '@hangar/platform';
import type { SkillRepository } from './skill.repository.js';

/** Skill rules. Today: which skills exist for a tenant (skill storage and grants come next). */
export function createSkillService(deps: { repository: SkillRepository }) {
  return {
    async findSkills(caller: Caller, names: string[]): Promise<string[]> {
      return deps.repository.existingNames(caller.tenantId, [...new Set(names)]);
    },
  };
}

export type SkillService = ReturnType<typeof createSkillService>;

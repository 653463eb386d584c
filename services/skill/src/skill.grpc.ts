import type { skillPb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { SkillService } from './skill.service.js';

export function skillGrpc(service: SkillService): skillPb.SkillServiceImplementation<CallerContext> {
  return {
    async findSkills({ names }, { caller }) {
      return { existing: await service.findSkills(caller, names) };
    },
  };
}

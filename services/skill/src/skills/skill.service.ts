import { conflict, notFound, validationError, type AuditWriter, type Caller } from '@hangar/platform';
import { skillProblems, type SkillLimits } from './skill-rules.js';
import type { Skill, SkillInput } from './skill.model.js';
import type { SkillRepository } from './skill.repository.js';

export interface SkillServiceDeps {
  repository: SkillRepository;
  /** Skills found on disk at start (Skills:Scripts:SkillRoots): every tenant sees them, and they win over stored ones. */
  onDisk: ReadonlyMap<string, Skill>;
  limits: SkillLimits;
  hasInterpreter: (extension: string) => boolean;
  audit: AuditWriter;
}

/** Skill rules (SPEC "Skills"): tenant-scoped stored skills, read-only skills on disk, whole-skill saves. */
export function createSkillService(deps: SkillServiceDeps) {
  const { repository, onDisk } = deps;

  /** A skill the tenant sees by that name: on disk first, then stored. */
  async function find(caller: Caller, name: string): Promise<Skill | undefined> {
    return onDisk.get(name) ?? (await repository.get(caller.tenantId, name));
  }

  return {
    async findSkills(caller: Caller, names: string[]): Promise<string[]> {
      const wanted = [...new Set(names)];
      const stored = await repository.existingNames(
        caller.tenantId,
        wanted.filter((name) => !onDisk.has(name)),
      );
      return wanted.filter((name) => onDisk.has(name) || stored.includes(name));
    },

    async list(caller: Caller): Promise<Skill[]> {
      const stored = (await repository.list(caller.tenantId)).filter((skill) => !onDisk.has(skill.name));
      return [...onDisk.values(), ...stored].sort((a, b) => a.name.localeCompare(b.name));
    },

    async get(caller: Caller, name: string): Promise<Skill> {
      const skill = await find(caller, name);
      if (!skill) throw notFound(`skill ${name} not found`);
      return skill;
    },

    find,

    /** Replaces the whole skill (SPEC Skills 3); a skill on disk cannot be saved through the API. */
    async save(caller: Caller, pathName: string, skill: SkillInput): Promise<{ skill: Skill; created: boolean }> {
      if (skill.name !== pathName)
        throw validationError('the skill name in the path and in the body differ', [
          { path: 'name', message: `must be "${pathName}" as in the path` },
        ]);
      if (onDisk.has(skill.name))
        throw conflict(`skill ${skill.name} lives on disk (Skills:Scripts:SkillRoots) and cannot be changed through the API`);
      const problems = skillProblems(skill, deps.limits, deps.hasInterpreter);
      if (problems.length) throw validationError('the skill is not valid', problems);
      const saved = await repository.save(caller.tenantId, skill);
      await deps.audit(caller, {
        action: saved.created ? 'skill.created' : 'skill.updated',
        resourceType: 'skill',
        resourceId: skill.name,
        details: {
          resources: skill.resources.map((resource) => resource.name),
          scripts: skill.scripts.map((script) => `${script.name}.${script.extension}`),
        },
      });
      return saved;
    },

    /** Removes the skill; agents naming it are not rewritten (their validation reports `skill_not_found`). */
    async delete(caller: Caller, name: string): Promise<void> {
      if (onDisk.has(name)) throw conflict(`skill ${name} lives on disk (Skills:Scripts:SkillRoots) and cannot be deleted through the API`);
      if (!(await repository.delete(caller.tenantId, name))) throw notFound(`skill ${name} not found`);
      await deps.audit(caller, { action: 'skill.deleted', resourceType: 'skill', resourceId: name, details: {} });
    },
  };
}

export type SkillService = ReturnType<typeof createSkillService>;

import type { skillPb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { Grant } from './grants/grant.model.js';
import type { GrantService } from './grants/grant.service.js';
import type { ScriptService } from './scripts/script.service.js';
import type { Skill } from './skills/skill.model.js';
import type { SkillService } from './skills/skill.service.js';

const skillToProto = (skill: Skill): skillPb.Skill => ({
  name: skill.name,
  description: skill.description,
  compatibility: skill.compatibility ?? undefined,
  instructions: skill.instructions,
  resources: skill.resources,
  scripts: skill.scripts,
  createdAt: skill.createdAt,
  updatedAt: skill.updatedAt,
  onDisk: skill.onDisk,
});

const grantToProto = (grant: Grant): skillPb.SkillScriptGrant => ({
  id: grant.id,
  skillName: grant.skillName,
  scriptName: grant.scriptName ?? undefined,
  expiresAt: grant.expiresAt ?? undefined,
  status: grant.status,
  createdAt: grant.createdAt,
  createdBy: grant.createdBy,
  revokedAt: grant.revokedAt ?? undefined,
});

/** gRPC ↔ skill and grant rules; translation only. */
export function skillGrpc(
  skills: SkillService,
  grants: GrantService,
  scripts: ScriptService,
): skillPb.SkillServiceImplementation<CallerContext> {
  return {
    async findSkills({ names }, { caller }) {
      return { existing: await skills.findSkills(caller, names) };
    },
    async listSkills(_, { caller }) {
      return { skills: (await skills.list(caller)).map(skillToProto) };
    },
    async getSkill({ name }, { caller }) {
      return { skill: skillToProto(await skills.get(caller, name)) };
    },
    async saveSkill({ pathName, skill }, { caller }) {
      const saved = await skills.save(caller, pathName, {
        name: skill!.name,
        description: skill!.description,
        compatibility: skill!.compatibility ?? null,
        instructions: skill!.instructions,
        resources: skill!.resources,
        scripts: skill!.scripts,
      });
      return { skill: skillToProto(saved.skill), created: saved.created };
    },
    async deleteSkill({ name }, { caller }) {
      await skills.delete(caller, name);
      return {};
    },
    async listGrants(_, { caller }) {
      return { grants: (await grants.list(caller)).map(grantToProto) };
    },
    async createGrant({ skillName, scriptName, expiresAt }, { caller }) {
      return {
        grant: grantToProto(await grants.create(caller, { skillName, scriptName: scriptName ?? null, expiresAt: expiresAt ?? null })),
      };
    },
    async revokeGrant({ skillName, scriptName }, { caller }) {
      await grants.revoke(caller, skillName, scriptName ?? null);
      return {};
    },
    async skillsForRun({ names }, { caller }) {
      return { skills: await scripts.skillsForRun(caller, names) };
    },
    async readSkillResource({ skillName, name }, { caller }) {
      return { content: await scripts.readResource(caller, skillName, name) };
    },
    async runSkillScript({ skillName, scriptName, args, stdin }, { caller, signal }) {
      const result = await scripts.runScript(caller, skillName, scriptName, { args, stdin }, signal);
      return {
        exitCode: result.exitCode ?? undefined,
        signal: result.signal ?? undefined,
        stdout: result.stdout,
        stderr: result.stderr,
        truncated: result.truncated,
        timedOut: result.timedOut,
        durationMs: Math.round(result.durationMs),
      };
    },
  };
}

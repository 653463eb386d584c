import { join } from 'node:path';
import { forbidden, HangarError, notFound, validationError, type Caller } from '@hangar/platform';
import type { GrantService } from '../grants/grant.service.js';
import type { Skill } from '../skills/skill.model.js';
import type { SkillService } from '../skills/skill.service.js';
import { ScriptRefused, type ScriptInput, type ScriptResult, type ScriptRunner } from './script-runner.js';

export interface ScriptServiceDeps {
  skills: Pick<SkillService, 'find'>;
  grants: Pick<GrantService, 'covers'>;
  /** Registered in code by the host (all-in-one does); without one, no script ever runs, whatever the settings say. */
  runner: ScriptRunner | undefined;
  /** Skills:Scripts:AllowStoredScripts: false lets only scripts of skills on disk run. */
  allowStoredScripts: boolean;
}

export interface RunSkill {
  name: string;
  description: string;
  instructions: string;
  resourceNames: string[];
  runnableScripts: string[];
}

/** What runs may use of skills: instructions, resources, and scripts under the grants in force at each call. */
export function createScriptService(deps: ScriptServiceDeps) {
  const { runner } = deps;

  /** Why the script may not run at all (whatever the grants), or undefined. */
  const barred = (skill: Skill): string | undefined =>
    !runner
      ? 'skill scripts cannot run here (Skills:Scripts:Enabled is false, or no script runner is registered)'
      : !skill.onDisk && !deps.allowStoredScripts
        ? 'only scripts of skills on disk may run (Skills:Scripts:AllowStoredScripts is false)'
        : undefined;

  async function skillOf(caller: Caller, name: string): Promise<Skill> {
    const skill = await deps.skills.find(caller, name);
    if (!skill) throw notFound(`skill ${name} not found`);
    return skill;
  }

  return {
    /** The named skills a run offers its model; a skill deleted since the agent was saved is left out. */
    async skillsForRun(caller: Caller, names: string[]): Promise<RunSkill[]> {
      const found = (await Promise.all(names.map((name) => deps.skills.find(caller, name)))).filter((skill): skill is Skill => !!skill);
      return Promise.all(
        found.map(async (skill) => ({
          name: skill.name,
          description: skill.description,
          instructions: skill.instructions,
          resourceNames: skill.resources.map((resource) => resource.name),
          runnableScripts: barred(skill)
            ? []
            : (
                await Promise.all(
                  skill.scripts
                    // A script of a skill on disk may have no interpreter configured: nothing could run it.
                    .filter((script) => runner!.interpreterFor(script.extension))
                    .map(async (script) => ((await deps.grants.covers(caller, skill.name, script.name)) ? script.name : undefined)),
                )
              ).filter((name): name is string => name !== undefined),
        })),
      );
    },

    async readResource(caller: Caller, skillName: string, name: string): Promise<string> {
      const resource = (await skillOf(caller, skillName)).resources.find((entry) => entry.name === name);
      if (!resource) throw notFound(`skill ${skillName} has no resource ${name}`);
      return resource.content;
    },

    /**
     * Runs a script when a grant in force covers it at this moment (a revocation applies to the next
     * call; a running script is not stopped). A refusal is an error the run hands its model.
     */
    async runScript(
      caller: Caller,
      skillName: string,
      scriptName: string,
      input: ScriptInput,
      signal?: AbortSignal,
    ): Promise<ScriptResult> {
      const skill = await skillOf(caller, skillName);
      const script = skill.scripts.find((entry) => entry.name === scriptName);
      if (!script) throw notFound(`skill ${skillName} has no script ${scriptName}`);
      const reason = barred(skill);
      if (reason) throw new HangarError('conflict', reason);
      if (!(await deps.grants.covers(caller, skillName, scriptName)))
        throw forbidden(`no grant in force lets script ${scriptName} of skill ${skillName} run`);
      // A process argument cannot hold NUL (spawn would throw); a model may well send one.
      if ([...(input.args ?? []), input.stdin ?? ''].some((text) => text.includes('\u0000')))
        throw validationError('script arguments and stdin cannot hold a NUL character', [
          { path: 'args', message: 'must not contain U+0000' },
        ]);
      try {
        return await runner!.run(
          {
            tenantId: caller.tenantId,
            skillName,
            scriptName,
            extension: script.extension,
            source: skill.directory
              ? { path: join(skill.directory, 'scripts', `${script.name}.${script.extension}`) }
              : { content: script.content },
          },
          input,
          signal,
        );
      } catch (error) {
        if (!(error instanceof ScriptRefused)) throw error;
        if (error.reason === 'arguments_too_large') throw validationError(error.message, [{ path: 'args', message: error.message }]);
        if (error.reason === 'busy') throw new HangarError('tooManyRequests', error.message, {}, 'rate_limited');
        throw new HangarError('conflict', error.message);
      }
    },
  };
}

export type ScriptService = ReturnType<typeof createScriptService>;

import type { FieldError, HangarConfig } from '@hangar/platform';
import type { SkillInput } from './skill.model.js';

export type SkillLimits = Pick<HangarConfig['Skills'], 'MaxInstructionsLength' | 'MaxResourceContentLength' | 'MaxResourcesPerSkill'> & {
  Scripts: Pick<HangarConfig['Skills']['Scripts'], 'MaxScriptContentLength' | 'MaxScriptsPerSkill'>;
};

/** A resource path inside the skill: relative, no `..`, no empty segment. */
const RESOURCE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*(\/[A-Za-z0-9_][A-Za-z0-9._-]*)*$/;
/** A script name becomes part of a tool name (`skill_<skill>_<script>`). */
const SCRIPT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const EXTENSION = /^[A-Za-z0-9]{1,16}$/;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * What is wrong with a skill beyond its shape: the size limits of SPEC "Skills and scripts" (each
 * finding names the limit), resource and script names, and scripts nothing could run.
 */
export function skillProblems(skill: SkillInput, limits: SkillLimits, hasInterpreter: (extension: string) => boolean): FieldError[] {
  const problems: FieldError[] = [];
  if (bytes(skill.instructions) > limits.MaxInstructionsLength)
    problems.push({ path: 'instructions', message: `is longer than Skills:MaxInstructionsLength (${limits.MaxInstructionsLength} bytes)` });
  if (skill.resources.length > limits.MaxResourcesPerSkill)
    problems.push({ path: 'resources', message: `has more than Skills:MaxResourcesPerSkill (${limits.MaxResourcesPerSkill}) entries` });
  if (skill.scripts.length > limits.Scripts.MaxScriptsPerSkill)
    problems.push({
      path: 'scripts',
      message: `has more than Skills:Scripts:MaxScriptsPerSkill (${limits.Scripts.MaxScriptsPerSkill}) entries`,
    });
  const resourceNames = new Set<string>();
  skill.resources.forEach((resource, index) => {
    if (!RESOURCE_NAME.test(resource.name) || resource.name.length > 255 || resource.name.split('/').includes('..'))
      problems.push({
        path: `resources[${index}].name`,
        message: 'must be a relative path of letters, digits, `.`, `_` and `-` (at most 255 characters)',
      });
    else if (resourceNames.has(resource.name)) problems.push({ path: `resources[${index}].name`, message: `repeats "${resource.name}"` });
    resourceNames.add(resource.name);
    if (bytes(resource.content) > limits.MaxResourceContentLength)
      problems.push({
        path: `resources[${index}].content`,
        message: `is longer than Skills:MaxResourceContentLength (${limits.MaxResourceContentLength} bytes)`,
      });
  });
  const scriptNames = new Set<string>();
  skill.scripts.forEach((script, index) => {
    if (!SCRIPT_NAME.test(script.name))
      problems.push({
        path: `scripts[${index}].name`,
        message: 'must be 1–64 letters, digits, `_` and `-`, starting with a letter or digit',
      });
    else if (scriptNames.has(script.name)) problems.push({ path: `scripts[${index}].name`, message: `repeats "${script.name}"` });
    scriptNames.add(script.name);
    if (!EXTENSION.test(script.extension))
      problems.push({ path: `scripts[${index}].extension`, message: 'must be letters and digits, without the dot (`sh`, `py`)' });
    else if (!hasInterpreter(script.extension))
      problems.push({
        path: `scripts[${index}].extension`,
        message: `no interpreter is registered for "${script.extension}" (Skills:Scripts:Interpreters)`,
      });
    if (bytes(script.content) > limits.Scripts.MaxScriptContentLength)
      problems.push({
        path: `scripts[${index}].content`,
        message: `is longer than Skills:Scripts:MaxScriptContentLength (${limits.Scripts.MaxScriptContentLength} bytes)`,
      });
  });
  return problems;
}

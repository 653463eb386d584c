import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve } from 'node:path';
import type { Logger } from '@hangar/platform';
import { parse as parseYaml } from 'yaml';
import { MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_SKILL_NAME, SKILL_NAME, type Skill } from './skill.model.js';

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/**
 * Skills in the Agent Skills layout under Skills:Scripts:SkillRoots: a folder `<name>/` holding
 * `SKILL.md` (YAML frontmatter `name`, `description`, `compatibility`; the body is the
 * instructions), resources beside it and scripts under `scripts/`. Folders are searched to
 * `searchDepth` levels below each root. A folder that breaks the frontmatter rules is skipped with
 * a warning, never half-loaded. Read once at start: the same for every tenant.
 */
export async function loadSkillsOnDisk(roots: string[], searchDepth: number, logger: Logger): Promise<Map<string, Skill>> {
  const found = new Map<string, Skill>();
  const visit = async (directory: string, depth: number) => {
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
    if (entries.some((entry) => entry.isFile() && entry.name === 'SKILL.md')) {
      const skill = await readSkill(directory).catch(
        (error: Error) => void logger.warn({ directory, reason: error.message }, 'skill on disk skipped'),
      );
      if (skill && found.has(skill.name))
        logger.warn({ directory, name: skill.name }, 'skill on disk skipped: its name is taken by another folder');
      else if (skill) found.set(skill.name, skill);
      return;
    }
    if (depth >= searchDepth) return;
    for (const entry of entries)
      if (entry.isDirectory() && !entry.name.startsWith('.')) await visit(join(directory, entry.name), depth + 1);
  };
  for (const root of roots) await visit(resolve(root), 0);
  return found;
}

async function readSkill(directory: string): Promise<Skill> {
  const text = await readFile(join(directory, 'SKILL.md'), 'utf8');
  const match = FRONTMATTER.exec(text);
  if (!match) throw new Error('SKILL.md has no YAML frontmatter');
  const front = (parseYaml(match[1]) ?? {}) as Record<string, unknown>;
  const name = front.name;
  if (typeof name !== 'string' || !SKILL_NAME.test(name) || name.length > MAX_SKILL_NAME)
    throw new Error('frontmatter `name` breaks the naming rules');
  if (name !== basename(directory)) throw new Error(`frontmatter name "${name}" differs from the folder name`);
  const description = front.description;
  if (typeof description !== 'string' || !description || description.length > MAX_DESCRIPTION)
    throw new Error('frontmatter `description` must be 1–1024 characters');
  const compatibility = front.compatibility ?? null;
  if (compatibility !== null && (typeof compatibility !== 'string' || compatibility.length > MAX_COMPATIBILITY))
    throw new Error('frontmatter `compatibility` must be at most 500 characters');
  const files = await filesUnder(directory);
  const scripts = files.filter((file) => file.startsWith('scripts/') && !file.slice(8).includes('/') && extname(file));
  const resources = files.filter((file) => file !== 'SKILL.md' && !scripts.includes(file));
  const modified = (await stat(join(directory, 'SKILL.md'))).mtime.toISOString();
  return {
    name,
    description,
    compatibility,
    instructions: match[2].trim(),
    resources: await Promise.all(resources.map(async (file) => ({ name: file, content: await readFile(join(directory, file), 'utf8') }))),
    scripts: await Promise.all(
      scripts.map(async (file) => ({
        name: basename(file, extname(file)),
        extension: extname(file).slice(1),
        content: await readFile(join(directory, file), 'utf8'),
      })),
    ),
    createdAt: modified,
    updatedAt: modified,
    onDisk: true,
    directory,
  };
}

/** Every file below `directory` (relative, `/`-separated), hidden ones left out. */
async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .filter((file) => !file.split('/').some((part) => part.startsWith('.')))
    .sort();
}

/** A skill as saved: instructions, resources and scripts (API.md "Attachments, skills, grants"). */
export interface SkillInput {
  name: string;
  description: string;
  compatibility: string | null;
  instructions: string;
  resources: Array<{ name: string; content: string }>;
  scripts: Array<{ name: string; extension: string; content: string }>;
}

export interface Skill extends SkillInput {
  createdAt: string;
  updatedAt: string;
  /** Found under Skills:Scripts:SkillRoots: read-only through the API, and wins over a stored skill of its name. */
  onDisk: boolean;
  /** The folder of an on-disk skill (its scripts run from there); null for a stored one. */
  directory: string | null;
}

/** Agent Skills frontmatter: 1–64 lowercase letters, digits and single hyphens, no hyphen at either end. */
export const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_SKILL_NAME = 64;
export const MAX_DESCRIPTION = 1024;
export const MAX_COMPATIBILITY = 500;

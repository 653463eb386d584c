export { createSkillModule, skillModule, type SkillModuleOptions } from './skill.module.js';
export { createSkillService, type SkillService } from './skills/skill.service.js';
export { createSkillRepository, type SkillDatabase } from './skills/skill.repository.js';
export { createGrantRepository } from './grants/grant.repository.js';
export { createScriptRunner, type ScriptRunner } from './scripts/script-runner.js';
export { SKILL_SCHEMA, skillMigrations } from './migrations/index.js';

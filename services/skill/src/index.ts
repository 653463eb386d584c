export { skillModule } from './skill.module.js';
export { createSkillService, type SkillService } from './skills/skill.service.js';
export { createSkillRepository, type SkillDatabase } from './skills/skill.repository.js';
export { createGrantRepository } from './grants/grant.repository.js';
export { skillMigrations } from './migrations/index.js';

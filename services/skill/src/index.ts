export { skillModule } from './skill.module.js';
export { createSkillService, type SkillService } from './skill.service.js';
export { createSkillRepository, type SkillDatabase } from './skill.repository.js';
export { skillMigrations } from './migrations/index.js';

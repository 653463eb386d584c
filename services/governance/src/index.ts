export { governanceModule } from './governance.module.js';
export { createAuditRepository, type GovernanceDatabase } from './audit.repository.js';
export { governanceMigrations } from './migrations/index.js';

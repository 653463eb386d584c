export { governanceModule } from './governance.module.js';
export { createAuditRepository } from './audit.repository.js';
export type { GovernanceDatabase } from './governance.database.js';
export { GOVERNANCE_SCHEMA, governanceMigrations } from './migrations/index.js';
export { createIdempotencyRepository } from './idempotency.repository.js';
export { createQuotaRepository, type CountedEvent } from './quota.repository.js';
export { createGovernanceService } from './governance.service.js';

export { sessionModule } from './session.module.js';
export { createSessionService, type SessionService } from './session.service.js';
export { createSessionRepository, type SessionDatabase, type SessionRepository } from './session.repository.js';
export { SESSION_SCHEMA, sessionMigrations } from './migrations/index.js';

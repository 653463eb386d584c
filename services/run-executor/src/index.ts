export { runExecutorModule } from './run-executor.module.js';
export { createRunEngine, type RunEngine } from './run-engine.service.js';
export { createRunRepository, type RunDatabase, type RunRepository } from './run.repository.js';
export { runMigrations } from './migrations/index.js';
export { costOf, priceFor } from './pricing.js';
export { createCircuitBreaker } from './providers/circuit-breaker.js';

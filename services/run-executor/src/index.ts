export { runExecutorModule } from './run-executor.module.js';
export { createRunEngine, type RunEngine } from './runs/run-engine.service.js';
export { createRunRepository, type RunRepository } from './runs/run.repository.js';
export type { RunDatabase } from './database.js';
export { RUN_SCHEMA, runMigrations } from './migrations/index.js';
export { costOf, priceFor } from './pricing.js';
export { createCircuitBreaker } from './providers/circuit-breaker.js';

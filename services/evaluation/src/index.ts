export { evaluationModule } from './evaluation.module.js';
export { createEvaluationService, type EvaluationService } from './suites/eval.service.js';
export { createEvaluationRepository, type EvaluationRepository } from './suites/eval.repository.js';
export type { EvaluationDatabase } from './database.js';
export { createSuiteWorker } from './suites/suite-worker.js';
export { EVALUATION_SCHEMA, evaluationMigrations } from './migrations/index.js';

import type { ExperimentTables } from './experiments/experiment.repository.js';
import type { OnlineTables } from './online/online.repository.js';
import type { SuiteTables } from './suites/eval.repository.js';

/** Every table of the evaluation schema. */
export type EvaluationDatabase = SuiteTables & OnlineTables & ExperimentTables;

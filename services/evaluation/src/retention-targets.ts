import { sql, type PurgeTarget } from '@hangar/storage';

/**
 * SPEC Retention `EvalCaseResults` (180 days): the results of evaluations stored before the cutoff,
 * the suite runs' case results and online evaluation's scores of sampled runs with its hourly
 * budgets (SPEC names no target of their own; docs/decisions.md, session 29).
 */
export const EVALUATION_RETENTION_TARGETS: Record<'EvalCaseResults', PurgeTarget[]> = {
  EvalCaseResults: [
    { table: 'case_results', key: ['suite_run_id', 'position'], older: (cutoff) => sql<boolean>`created_at < ${cutoff}` },
    { table: 'online_scores', key: ['run_id'], older: (cutoff) => sql<boolean>`created_at < ${cutoff}` },
    { table: 'online_budget', key: ['tenant_id', 'hour'], older: (cutoff) => sql<boolean>`hour < ${cutoff}` },
  ],
};

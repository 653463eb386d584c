import { sql, type PurgeTarget } from '@hangar/storage';

/** SPEC Retention `EvalCaseResults` (180 days): case results stored before the cutoff. */
export const EVALUATION_RETENTION_TARGETS: Record<'EvalCaseResults', PurgeTarget> = {
  EvalCaseResults: { table: 'case_results', key: ['suite_run_id', 'position'], older: (cutoff) => sql<boolean>`created_at < ${cutoff}` },
};

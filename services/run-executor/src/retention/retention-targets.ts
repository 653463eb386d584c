import { sql, type PurgeTarget } from '@hangar/storage';

/** The retention targets the run executor's tables hold (SPEC Limits "Retention"). */
export const RUN_RETENTION_TARGETS: Record<
  'RunEvents' | 'RunInputs' | 'RunScores' | 'Jobs' | 'Spans' | 'WorkflowCheckpoints' | 'VoiceSessions',
  PurgeTarget
> = {
  RunEvents: { table: 'run_events', key: ['run_id', 'seq'], older: (cutoff) => sql<boolean>`at < ${cutoff}` },
  RunInputs: { table: 'run_inputs', key: ['run_id'], older: (cutoff) => sql<boolean>`recorded_at < ${cutoff}` },
  RunScores: { table: 'run_scores', key: ['id'], older: (cutoff) => sql<boolean>`created_at < ${cutoff}` },
  Spans: { table: 'run_spans', key: ['run_id', 'span_id'], older: (cutoff) => sql<boolean>`start_time < ${cutoff}` },
  // Completed jobs only: a queued or leased job is work still to do.
  // Counted from the end of their run: a run still going keeps every checkpoint.
  WorkflowCheckpoints: { table: 'workflow_checkpoints', key: ['id'], older: (cutoff) => sql<boolean>`run_ended_at < ${cutoff}` },
  // Ended conversations, and those whose instance died (their last beat).
  VoiceSessions: {
    table: 'voice_conversations',
    key: ['id'],
    older: (cutoff) => sql<boolean>`coalesce(ended_at, last_seen_at) < ${cutoff}`,
  },
  Jobs: { table: 'jobs', key: ['id'], older: (cutoff) => sql<boolean>`status in ('done', 'failed') and updated_at < ${cutoff}` },
};

/** SPEC Limits "Retention": every target, in SPEC's order. */
export const RETENTION_TARGETS = [
  'RunEvents',
  'ToolInvocations',
  'Spans',
  'Jobs',
  'WebhookDeliveries',
  'EvalCaseResults',
  'WorkflowCheckpoints',
  'SkillScriptGrants',
  'Attachments',
  'Sessions',
  'Conversations',
  'IdempotencyKeys',
  'RunInputs',
  'VoiceSessions',
  'RunScores',
  'DocumentEmbeddings',
] as const;

export type RetentionTarget = (typeof RETENTION_TARGETS)[number];

/**
 * The service whose tables hold each target. A target missing here has no store yet (its feature
 * has not landed): its policy is kept and shown, and applying it deletes nothing.
 */
export const RETENTION_OWNERS: Partial<
  Record<RetentionTarget, 'RunExecutor' | 'Governance' | 'Skill' | 'Attachment' | 'Session' | 'Knowledge' | 'Evaluation'>
> = {
  RunEvents: 'RunExecutor',
  Jobs: 'RunExecutor',
  RunInputs: 'RunExecutor',
  RunScores: 'RunExecutor',
  Spans: 'RunExecutor',
  WebhookDeliveries: 'Governance',
  IdempotencyKeys: 'Governance',
  SkillScriptGrants: 'Skill',
  Attachments: 'Attachment',
  Sessions: 'Session',
  DocumentEmbeddings: 'Knowledge',
  EvalCaseResults: 'Evaluation',
  WorkflowCheckpoints: 'RunExecutor',
  VoiceSessions: 'RunExecutor',
};

const DAY_MS = 86_400_000;

/** SPEC's default maximum age of each target (null: kept forever). */
export const RETENTION_DEFAULT_MAX_AGE_MS: Record<RetentionTarget, number | null> = {
  RunEvents: 30 * DAY_MS,
  ToolInvocations: 90 * DAY_MS,
  Spans: 14 * DAY_MS,
  Jobs: 30 * DAY_MS,
  WebhookDeliveries: 7 * DAY_MS,
  EvalCaseResults: 180 * DAY_MS,
  WorkflowCheckpoints: 7 * DAY_MS,
  SkillScriptGrants: 30 * DAY_MS,
  Attachments: 7 * DAY_MS,
  Sessions: null,
  Conversations: null,
  IdempotencyKeys: DAY_MS,
  RunInputs: 30 * DAY_MS,
  VoiceSessions: 30 * DAY_MS,
  RunScores: 180 * DAY_MS,
  DocumentEmbeddings: null,
};

/** Fixed by SPEC ("not bindable from configuration"): shown, never stored. */
export const FIXED_RETENTION_TARGETS: ReadonlySet<RetentionTarget> = new Set(['IdempotencyKeys']);

/** What a run is, as the run executor's rules see it (no SQL, no transport). */
import { RUN_STATUSES, TERMINAL_RUN_STATUSES, type RunStatusName } from '@hangar/contracts';
import { validationError } from '@hangar/platform';

export { RUN_STATUSES };
export type RunStatus = RunStatusName;
export const RUN_KINDS = [
  'Interactive',
  'Async',
  'Child',
  'Scheduled',
  'Evaluation',
  'Replay',
  'Compatibility',
  'Workflow',
  'Voice',
] as const;
export type RunKind = (typeof RUN_KINDS)[number];
/** The kinds a caller of StartRun may ask for; the others are the executor's own (queued, child, …). */
export const REQUESTABLE_RUN_KINDS = ['Interactive', 'Compatibility', 'Evaluation'] as const;
export type RequestableRunKind = (typeof REQUESTABLE_RUN_KINDS)[number];

export function requestableRunKind(kind: string | undefined): RequestableRunKind | undefined {
  if (kind === undefined || (REQUESTABLE_RUN_KINDS as readonly string[]).includes(kind)) return kind as RequestableRunKind | undefined;
  throw validationError(`a run of kind "${kind}" cannot be started directly`, [
    { path: 'kind', message: `must be one of ${REQUESTABLE_RUN_KINDS.join(', ')}` },
  ]);
}
export const TERMINAL_STATUSES = TERMINAL_RUN_STATUSES;

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  totalTokens: number;
}

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 0 };

export interface Cost {
  input: number | null;
  output: number | null;
  cachedInput: number | null;
  total: number;
  currency: string;
}

export interface PriceSnapshot {
  input: number | null;
  output: number | null;
  cachedInput: number | null;
}

export interface RunRow {
  id: string;
  agentName: string;
  agentVersion: number | null;
  sessionId: string | null;
  status: RunStatus;
  kind: RunKind;
  isStreaming: boolean;
  startedAt: string;
  completedAt: string | null;
  durationMs: number | null;
  usage: Usage;
  cost: Cost | null;
  modelProvider: string | null;
  model: string | null;
  errorType: string | null;
  errorMessage: string | null;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  userId: string | null;
  labels: Record<string, string>;
}

export interface NewRun {
  id: string;
  agentName: string;
  agentVersion: number | null;
  sessionId: string | null;
  kind: RunKind;
  isStreaming: boolean;
  rootRunId: string;
  parentRunId: string | null;
  depth: number;
  userId: string | null;
  labels: Record<string, string>;
}

/** How a run ended: what `finish` records. */
export interface RunOutcome {
  status: RunStatus;
  usage: Usage;
  cost: Cost | null;
  prices: PriceSnapshot;
  errorType: string | null;
  errorMessage: string | null;
}

export interface RunFilter {
  agentName?: string;
  status?: RunStatus;
  kind?: RunKind;
  sessionId?: string;
  errorType?: string;
  userId?: string;
  /** `key:value`, or a bare `key` matching any value. */
  label?: string;
  startedAfter?: string;
  includeChildren: boolean;
  parentRunId?: string;
  rootRunId?: string;
  skip: number;
  take: number;
}

export interface StartRunRequest {
  agentName: string;
  sessionId?: string;
  messages: Array<{ role: string; content: string }>;
  parameters: Array<{ name: string; value: string }>;
  isStreaming: boolean;
  /** Attachment ids handed to the model with the last user message. */
  attachments: string[];
  /** Absent: Interactive. `Voice`: a turn of a voice conversation, which only the run executor starts. */
  kind?: RequestableRunKind | 'Voice';
  /** What an API-compatible client sent beside the conversation; recorded with the input, never attribution. */
  clientMetadata?: Record<string, unknown>;
  /** Added after the agent's instructions for this run only (OpenAI Responses `instructions`); not kept in the session. */
  instructions?: string;
  /** A stored version of the agent instead of its current one. */
  agentVersion?: number;
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** The AI SDK's usage (every field optional) as a run's usage; the total defaults to input + output. */
export function usageOf(usage: Partial<Usage>): Usage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    reasoningTokens: usage.reasoningTokens ?? 0,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
  };
}

/** Several steps' usage added up (the AI SDK reports it per step). */
export const sumUsage = (usages: Array<Partial<Usage>>): Usage => usages.map(usageOf).reduce(addUsage, ZERO_USAGE);

/** What `RunRecording:RecordRunInput` keeps of a run's request. */
export const recordedRunInput = (agentName: string, request: StartRunRequest) => ({
  agentName,
  sessionId: request.sessionId ?? null,
  messages: request.messages,
  parameters: request.parameters,
  attachments: request.attachments,
  ...(request.clientMetadata && { clientMetadata: request.clientMetadata }),
  ...(request.instructions !== undefined && { instructions: request.instructions }),
});

/**
 * A new run as its row will read once written (`model`: the one the insert names first); also what
 * the caller still gets when the row could not be written (recording must not block the run).
 */
export const placeholderRun = (run: NewRun, model?: { provider: string; model: string }): RunRow => ({
  ...run,
  status: 'Running',
  startedAt: new Date().toISOString(),
  completedAt: null,
  durationMs: null,
  usage: ZERO_USAGE,
  cost: null,
  modelProvider: model?.provider ?? null,
  model: model?.model ?? null,
  errorType: null,
  errorMessage: null,
});

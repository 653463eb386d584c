import type { runPb } from '@hangar/contracts';
import { classifyError, HangarError, type Caller } from '@hangar/platform';
import type { GatewayContext } from '../../gateway.context.js';
import { startedRun } from '../../http/run-stream.js';
import type { TurnMessage } from './openai-requests.js';

/**
 * A `/v1` call as a Hangar run: a recorded run of kind `Compatibility`, admitted and governed like
 * the native run route (quota, run authorization, content guard, attribution happen in the run
 * executor). Refusals arrive before `started` and are thrown as HTTP errors.
 */

export interface CompatibilityRun {
  agentName: string;
  messages: TurnMessage[];
  sessionId?: string;
  /** For this run only, after the agent's own instructions; never kept in a session. */
  instructions?: string;
  isStreaming: boolean;
  /** OpenAI's `user`, `metadata`, `store`…: recorded with the run's input. */
  clientMetadata: Record<string, unknown>;
}

export interface StartedRun {
  run: runPb.RunRecord;
  updates: AsyncIterator<runPb.StartRunResponse>;
  /** Set when the client went away: the run ends Canceled and nobody reads the answer. */
  signal: AbortSignal;
}

/** The answer headers of a `/v1` run, for the OpenAPI document. */
export const RUN_HEADERS = {
  'X-Hangar-Run-Id': { description: 'The id of the recorded run (GET /api/runs/{runId})' },
  'X-Hangar-Ignored-Parameters': { description: 'Request settings the agent’s definition decides, which were not applied' },
};

/** An unknown agent named as `model` is OpenAI's `model_not_found`. */
export const modelNotFound = (model: string) =>
  new HangarError('notFound', `The model '${model}' does not exist or you do not have access to it.`, {}, 'model_not_found');

/** The host's run-authorization handler on starting the agent, asked before anything else is done for the call. */
export async function authorizeStart({ authorizeRun }: GatewayContext, caller: Caller, agentName: string) {
  if (authorizeRun && !(await authorizeRun({ operation: 'runs.start', ...caller, resourceId: agentName })))
    throw new HangarError('forbidden', 'the run-authorization handler denied runs.start');
}

/** Starts the run; `signal` is the client's departure (the run then ends Canceled). */
export async function startCompatibilityRun(
  request: CompatibilityRun,
  caller: Caller,
  signal: AbortSignal,
  { runs }: GatewayContext,
): Promise<StartedRun> {
  const updates = runs
    .startRun(
      {
        agentName: request.agentName,
        sessionId: request.sessionId,
        messages: request.messages,
        parameters: [],
        isStreaming: request.isStreaming,
        attachments: [],
        kind: 'Compatibility',
        clientMetadata: request.clientMetadata,
        instructions: request.instructions,
      },
      { caller, signal },
    )
    [Symbol.asyncIterator]();
  try {
    return { run: await startedRun(updates), updates, signal };
  } catch (error) {
    // The run names no attachment and opens no existing record but its agent: a 404 is the agent.
    if (classifyError(error)?.status === 404) throw modelNotFound(request.agentName);
    throw error;
  }
}

/** A run's token counts, from its record or its JSON. */
export type UsageCounts = Partial<NonNullable<runPb.RunRecord['usage']>> | undefined;

/** Usage in OpenAI's Chat Completions shape. */
export const chatUsage = (usage: UsageCounts) => ({
  prompt_tokens: usage?.inputTokens ?? 0,
  completion_tokens: usage?.outputTokens ?? 0,
  total_tokens: usage?.totalTokens ?? 0,
  prompt_tokens_details: { cached_tokens: usage?.cachedInputTokens ?? 0 },
  completion_tokens_details: { reasoning_tokens: usage?.reasoningTokens ?? 0 },
});

/** Usage in OpenAI's Responses shape. */
export const responseUsage = (usage: UsageCounts) => ({
  input_tokens: usage?.inputTokens ?? 0,
  input_tokens_details: { cached_tokens: usage?.cachedInputTokens ?? 0 },
  output_tokens: usage?.outputTokens ?? 0,
  output_tokens_details: { reasoning_tokens: usage?.reasoningTokens ?? 0 },
  total_tokens: usage?.totalTokens ?? 0,
});

/** Seconds since the epoch, as OpenAI's `created` fields count. */
export const epochSeconds = (iso: string | undefined) => Math.floor((iso ? Date.parse(iso) : Date.now()) / 1000);

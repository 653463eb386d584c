import { utilityModelOf, type Caller, type HangarConfig } from '@hangar/platform';
import { generateText } from 'ai';
import type { AgentLoader, PromptEstimate } from '../clients/ports.js';
import { costOf, priceFor } from '../pricing.js';
import type { ModelResolver, TenantBindings } from '../providers/model-providers.js';
import { promptOf, textOf, type SessionMessage } from './prepare.js';
import { usageOf, type StartRunRequest, type Usage } from './run.model.js';

const SUMMARY_INSTRUCTIONS = [
  'You compact the earlier part of a conversation that no longer fits the context window of the assistant who continues it.',
  'Summarize it for that assistant: keep the facts, names, numbers, decisions, open questions and what the user asked for; leave out small talk.',
  'Write plain prose in the language of the conversation, a few paragraphs at most.',
].join(' ');

/** The summary's bound: a quarter of the allowed prompt, and no more than a utility model commonly writes at once. */
const SUMMARY_SHARE = 0.25;
const SUMMARY_MAX_TOKENS = 2048;
/** What the kept messages leave free of the allowed prompt beside the summary: tools and instructions the estimate does not count. */
const MARGIN_SHARE = 0.1;
/** How long the utility model may take when its provider sets no Timeout. */
const DEFAULT_TIMEOUT_MS = 60_000;

/** The most a summary of a conversation whose allowed prompt is `allowed` tokens may be. */
export const summaryBound = (allowed: number) => Math.max(64, Math.min(SUMMARY_MAX_TOKENS, Math.floor(allowed * SUMMARY_SHARE)));

/** The tokens the kept newest messages may fill beside the instructions and new messages (`baseTokens`), the summary and a margin. */
export const roomForHistory = (allowed: number, baseTokens: number) =>
  allowed - baseTokens - summaryBound(allowed) - Math.floor(allowed * MARGIN_SHARE);

/** How the summary reaches the model: a message of the conversation, never the instructions (its words are the users', rephrased). */
export const summaryMessage = (summary: string) => ({
  role: 'user',
  content: `[A summary of the earlier part of this conversation, whose messages no longer fit]\n${summary}`,
});

export interface HistoryCompaction {
  /** What the run's conversation starts with instead of the summarized messages ({@link summaryMessage}). */
  summary: string;
  summarizedMessages: number;
  keptMessages: number;
  provider: string;
  model: string;
  usage: Usage;
  /** The summary's cost under Pricing (null: the utility model is not priced). */
  cost: number | null;
}

/**
 * Where the kept messages start: the newest ones whose tokens fit `keptTokens`, the history's
 * tokens spread over its characters (the estimate with history less the estimate without).
 */
export function firstKept(history: SessionMessage[], historyTokens: number, keptTokens: number): number {
  const lengths = history.map((message) => textOf(message.content).length);
  const tokensPerChar =
    Math.max(historyTokens, 1) /
    Math.max(
      1,
      lengths.reduce((sum, length) => sum + length, 0),
    );
  let budget = keptTokens / tokensPerChar;
  let cut = history.length;
  while (cut > 0 && lengths[cut - 1] <= budget) {
    budget -= lengths[cut - 1];
    cut -= 1;
  }
  return cut;
}

/** The messages to summarize as one text, the newest `maxChars` of it when it is longer (a utility model's window is finite too). */
export function transcriptOf(messages: SessionMessage[], maxChars: number): string {
  const transcript = messages.map((message) => `${message.role}: ${textOf(message.content)}`).join('\n\n');
  return transcript.length <= maxChars ? transcript : transcript.slice(transcript.length - maxChars);
}

/** A prompt that does not fit even with its history summarized: the run fails `context_window_exceeded`. */
export interface TooLong {
  estimatedPromptTokens: number;
  allowedPromptTokens: number;
}

/**
 * Compaction (SPEC Limits "Core" `UtilityModel`): a session whose history would not fit the
 * agent's context window gets its oldest messages summarized by the utility model, for this run's
 * prompt only; the session keeps every message. Undefined while `UtilityModel` is not set.
 */
export function createHistoryCompaction(deps: {
  agents: Pick<AgentLoader, 'estimate'>;
  models: Pick<ModelResolver, 'resolve'>;
  settings: Pick<HangarConfig, 'UtilityModel' | 'Pricing'>;
}) {
  const utility = utilityModelOf(deps.settings.UtilityModel);
  if (!utility) return undefined;
  return {
    /** Whether a prompt over its window could fit once its history is summarized: the instructions and new messages leave room. */
    async fitsOnceCompacted(
      caller: Caller,
      agentName: string,
      messages: StartRunRequest['messages'],
      parameters: ReadonlyMap<string, string>,
      allowed: number,
    ): Promise<boolean> {
      const base = await deps.agents.estimate(caller, agentName, messages, parameters);
      return roomForHistory(allowed, base.estimatedPromptTokens) >= 0;
    },

    /**
     * The history to send and, when it was compacted, how (its summary is paid for, whatever comes
     * next); the history as it is when it fits (or the window is unknown). `tooLong` when even the
     * compacted prompt would not fit.
     */
    async compact(
      caller: Caller,
      run: {
        agentName: string;
        parameters: ReadonlyMap<string, string>;
        history: SessionMessage[];
        messages: StartRunRequest['messages'];
        tenant?: TenantBindings;
        /** The pre-flight check's estimate of the whole prompt, when it made one. */
        estimate?: PromptEstimate;
        signal: AbortSignal;
      },
    ): Promise<{ history: SessionMessage[]; compaction?: HistoryCompaction; tooLong?: TooLong }> {
      const { history, messages, parameters } = run;
      if (!history.length) return { history };
      const estimate = run.estimate ?? (await deps.agents.estimate(caller, run.agentName, promptOf(history, messages), parameters));
      const allowed = estimate.allowedPromptTokens;
      if (allowed === null || estimate.estimatedPromptTokens <= allowed) return { history };
      // The instructions and the new messages, which stay whatever is summarized.
      const base = await deps.agents.estimate(caller, run.agentName, messages, parameters);
      const keptTokens = roomForHistory(allowed, base.estimatedPromptTokens);
      if (keptTokens < 0)
        return {
          history,
          tooLong: { estimatedPromptTokens: base.estimatedPromptTokens + summaryBound(allowed), allowedPromptTokens: allowed },
        };
      const cut = firstKept(history, estimate.estimatedPromptTokens - base.estimatedPromptTokens, keptTokens);
      if (cut === 0) return { history };
      const resolved = deps.models.resolve(utility.provider, utility.model, run.tenant);
      if (!resolved) throw new Error(`UtilityModel ${utility.provider}/${utility.model}: its provider is not configured`);
      // As many characters as the agent's allowed prompt holds: what a utility model's window is assumed to take.
      const historyChars = history.reduce((sum, message) => sum + textOf(message.content).length, 0);
      const charsPerToken = historyChars / Math.max(1, estimate.estimatedPromptTokens - base.estimatedPromptTokens);
      const answer = await generateText({
        model: resolved.languageModel,
        system: SUMMARY_INSTRUCTIONS,
        prompt: transcriptOf(history.slice(0, cut), Math.max(1000, Math.floor(allowed * charsPerToken))),
        maxOutputTokens: summaryBound(allowed),
        abortSignal: AbortSignal.any([run.signal, AbortSignal.timeout(resolved.settings.Timeout ?? DEFAULT_TIMEOUT_MS)]),
        maxRetries: 0,
      });
      const summary = answer.text.trim();
      if (!summary) throw new Error('the utility model answered no summary');
      const usage = usageOf(answer.usage);
      const compaction: HistoryCompaction = {
        summary,
        summarizedMessages: cut,
        keptMessages: history.length - cut,
        ...utility,
        usage,
        cost: costOf(usage, priceFor(deps.settings.Pricing, utility.provider, utility.model), null)?.total ?? null,
      };
      const kept = history.slice(cut);
      const after = await deps.agents.estimate(caller, run.agentName, promptOf([summaryMessage(summary), ...kept], messages), parameters);
      if (after.estimatedPromptTokens > allowed)
        return { history: kept, compaction, tooLong: { estimatedPromptTokens: after.estimatedPromptTokens, allowedPromptTokens: allowed } };
      return { history: kept, compaction };
    },
  };
}

export type HistoryCompactor = NonNullable<ReturnType<typeof createHistoryCompaction>>;

import type { Caller, HangarConfig } from '@hangar/platform';
import { generateText } from 'ai';
import type { AgentLoader } from '../clients/ports.js';
import { costOf, priceFor } from '../pricing.js';
import type { ModelResolver } from '../providers/model-providers.js';
import { promptOf, textOf, type SessionMessage } from './prepare.js';
import { usageOf, type StartRunRequest, type Usage } from './run.model.js';

const SUMMARY_INSTRUCTIONS = [
  'You compact the earlier part of a conversation that no longer fits the context window of the assistant who continues it.',
  'Summarize it for that assistant: keep the facts, names, numbers, decisions, open questions and what the user asked for; leave out small talk.',
  'Write plain prose in the language of the conversation, a few paragraphs at most.',
].join(' ');

/** The share of the allowed prompt the kept newest messages may fill: the rest is for the summary, the instructions and the answer's tools. */
const KEPT_SHARE = 0.5;
/** The summary's bound, as a share of the allowed prompt. */
const SUMMARY_SHARE = 0.25;

export interface HistoryCompaction {
  /** What the run's instructions carry instead of the summarized messages. */
  summary: string;
  summarizedMessages: number;
  keptMessages: number;
  provider: string;
  model: string;
  usage: Usage;
  /** The summary's cost under Pricing (null: the utility model is not priced). */
  cost: number | null;
}

/** `UtilityModel` as `provider/model`; undefined when it is not set. */
export function utilityModelOf(setting: string | null): { provider: string; model: string } | undefined {
  if (!setting) return undefined;
  const slash = setting.indexOf('/');
  return { provider: setting.slice(0, slash), model: setting.slice(slash + 1) };
}

/**
 * Where the kept messages start: the newest ones whose share of the estimate fits `KEPT_SHARE` of
 * the allowed prompt beside the request's own messages. Tokens are spread over the prompt's
 * characters as the estimate counted them (instructions not known here, so a little high: fewer kept).
 */
export function firstKept(
  history: SessionMessage[],
  messages: StartRunRequest['messages'],
  estimate: { estimatedPromptTokens: number; allowedPromptTokens: number },
): number {
  const lengths = history.map((message) => textOf(message.content).length);
  const requestLength = messages.reduce((sum, message) => sum + message.content.length, 0);
  const tokensPerChar = estimate.estimatedPromptTokens / Math.max(1, lengths.reduce((sum, length) => sum + length, 0) + requestLength);
  let budget = (estimate.allowedPromptTokens * KEPT_SHARE) / Math.max(tokensPerChar, Number.EPSILON) - requestLength;
  let cut = history.length;
  while (cut > 0 && lengths[cut - 1] <= budget) {
    budget -= lengths[cut - 1];
    cut -= 1;
  }
  return cut;
}

const transcriptOf = (messages: SessionMessage[]) => messages.map((message) => `${message.role}: ${textOf(message.content)}`).join('\n\n');

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
    /** The history to send and, when it was compacted, how; the history as it is when it fits (or the window is unknown). */
    async compact(
      caller: Caller,
      run: {
        agentName: string;
        parameters: ReadonlyMap<string, string>;
        history: SessionMessage[];
        messages: StartRunRequest['messages'];
        signal: AbortSignal;
      },
    ): Promise<{ history: SessionMessage[]; compaction?: HistoryCompaction }> {
      const { history, messages } = run;
      if (!history.length) return { history };
      const estimate = await deps.agents.estimate(caller, run.agentName, promptOf(history, messages), run.parameters);
      const allowed = estimate.allowedPromptTokens;
      if (allowed === null || estimate.estimatedPromptTokens <= allowed) return { history };
      const cut = firstKept(history, messages, { estimatedPromptTokens: estimate.estimatedPromptTokens, allowedPromptTokens: allowed });
      if (cut === 0) return { history };
      const resolved = deps.models.resolve(utility.provider, utility.model);
      if (!resolved) throw new Error(`UtilityModel ${utility.provider}/${utility.model}: its provider is not configured`);
      const answer = await generateText({
        model: resolved.languageModel,
        system: SUMMARY_INSTRUCTIONS,
        prompt: transcriptOf(history.slice(0, cut)),
        maxOutputTokens: Math.max(64, Math.floor(allowed * SUMMARY_SHARE)),
        abortSignal: run.signal,
        maxRetries: 0,
      });
      const usage = usageOf(answer.usage);
      return {
        history: history.slice(cut),
        compaction: {
          summary: answer.text,
          summarizedMessages: cut,
          keptMessages: history.length - cut,
          ...utility,
          usage,
          cost: costOf(usage, priceFor(deps.settings.Pricing, utility.provider, utility.model), null)?.total ?? null,
        },
      };
    },
  };
}

export type HistoryCompactor = NonNullable<ReturnType<typeof createHistoryCompaction>>;

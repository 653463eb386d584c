import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

/** The fixed reference tokenizer: estimates are approximate by design (SPEC Agents 9). */
export const REFERENCE_TOKENIZER = 'o200k_base';

// Chat formats spend a few tokens per message on role and separators, and a few to prime the reply.
const TOKENS_PER_MESSAGE = 4;
const REPLY_PRIMING_TOKENS = 3;

let encoder: Tiktoken | undefined;

export function countPromptTokens(system: string | null, messages: Array<{ role: string; content: string }>): number {
  encoder ??= new Tiktoken(o200k);
  const all = system ? [{ role: 'system', content: system }, ...messages] : messages;
  return all.reduce((sum, message) => sum + TOKENS_PER_MESSAGE + encoder!.encode(message.content).length, REPLY_PRIMING_TOKENS);
}

export interface PromptEstimate {
  estimatedPromptTokens: number;
  contextWindowTokens: number | null;
  allowedPromptTokens: number | null;
  wouldBeRejected: boolean;
  tokenizer: string;
}

/** allowed = floor(window × (1 − reserve)); an unknown window never rejects. */
export function estimatePrompt(estimatedPromptTokens: number, contextWindowTokens: number | null, reserveRatio: number): PromptEstimate {
  const allowedPromptTokens = contextWindowTokens === null ? null : Math.floor(contextWindowTokens * (1 - reserveRatio));
  return {
    estimatedPromptTokens,
    contextWindowTokens,
    allowedPromptTokens,
    wouldBeRejected: allowedPromptTokens !== null && estimatedPromptTokens > allowedPromptTokens,
    tokenizer: REFERENCE_TOKENIZER,
  };
}

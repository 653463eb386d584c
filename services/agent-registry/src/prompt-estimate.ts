import { countTokens } from './prompt-tokens.js';

/** The fixed reference tokenizer: estimates are approximate by design (SPEC Agents 9). */
export const REFERENCE_TOKENIZER = 'o200k_base';

// Chat formats spend a few tokens per message on role and separators, and a few to prime the reply.
const TOKENS_PER_MESSAGE = 4;
const REPLY_PRIMING_TOKENS = 3;

/** Prompt tokens by the reference tokenizer: exact on ordinary text, estimated on long unbroken runs. */
export async function countPromptTokens(system: string | null, messages: Array<{ role: string; content: string }>): Promise<number> {
  const all = system ? [system, ...messages.map((message) => message.content)] : messages.map((message) => message.content);
  const counts = await countTokens(all);
  return counts.reduce((sum, tokens) => sum + TOKENS_PER_MESSAGE + tokens, REPLY_PRIMING_TOKENS);
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

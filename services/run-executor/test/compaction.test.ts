import { describe, expect, it } from 'vitest';
import { firstKept, utilityModelOf } from '../src/runs/compaction.js';

const message = (role: string, length: number) => ({ role, content: 'x'.repeat(length) });

describe('history compaction: what is kept', () => {
  it('keeps the newest messages that fit half the allowed prompt beside the request, by the estimate’s tokens per character', () => {
    // 1,000 characters estimated at 250 tokens: 4 characters a token. Half of 100 allowed tokens is 200 characters, less the request's 40.
    const history = [message('user', 400), message('assistant', 300), message('user', 100), message('assistant', 60)];
    const request = [{ role: 'user', content: 'y'.repeat(140) }];
    expect(firstKept(history, request, { estimatedPromptTokens: 250, allowedPromptTokens: 100 })).toBe(3);
    expect(firstKept(history, request, { estimatedPromptTokens: 250, allowedPromptTokens: 240 })).toBe(2);
  });

  it('keeps nothing of the history when the request alone fills the kept share, and everything when all of it fits', () => {
    const history = [message('user', 10), message('assistant', 10)];
    expect(
      firstKept(history, [{ role: 'user', content: 'y'.repeat(1000) }], { estimatedPromptTokens: 300, allowedPromptTokens: 100 }),
    ).toBe(2);
    expect(firstKept(history, [{ role: 'user', content: 'y' }], { estimatedPromptTokens: 6, allowedPromptTokens: 1000 })).toBe(0);
  });

  it('reads UtilityModel as provider/model, the model keeping any further slash', () => {
    expect(utilityModelOf(null)).toBeUndefined();
    expect(utilityModelOf('openai/gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(utilityModelOf('local/org/model')).toEqual({ provider: 'local', model: 'org/model' });
  });
});

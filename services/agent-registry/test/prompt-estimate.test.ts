import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { countPromptTokens } from '../src/prompt-estimate.js';

const reference = new Tiktoken(o200k);
// 4 tokens per message, 3 to prime the reply.
const exactCount = (text: string) => reference.encode(text).length + 4 + 3;

/** Counts `text` while a 5 ms timer ticks; the longest gap between ticks is how long the event loop was held. */
async function countWatchingTheLoop(text: string) {
  let last = performance.now();
  let longestStall = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestStall = Math.max(longestStall, now - last);
    last = now;
  }, 5);
  const tokens = await countPromptTokens(null, [{ role: 'user', content: text }]);
  clearInterval(ticker);
  return { tokens, longestStall: Math.max(longestStall, performance.now() - last) };
}

describe('prompt token count', () => {
  it('matches the reference tokenizer exactly on ordinary text of any length', async () => {
    const words = ['model', 'agent', 'Hangar,', 'runs', 'the', '42', 'tokens.', 'naïve', '東京', 'emoji🙂', '\n\n', '(x)'];
    const prose = Array.from({ length: 12_000 }, (_, index) => words[(index * 7) % words.length]).join(' ');
    expect(prose.length).toBeGreaterThan(50_000);
    expect(await countPromptTokens(null, [{ role: 'user', content: prose }])).toBe(exactCount(prose));
    expect(await countPromptTokens('Be brief.', [{ role: 'user', content: 'hello world' }])).toBe(
      reference.encode('Be brief.').length + reference.encode('hello world').length + 2 * 4 + 3,
    );
  });

  // Before: 16,000 × "A" held the event loop 25.8 s, and the time grew with the square of the length.
  it.each([
    ['1 MiB of one letter', 'A'.repeat(1024 * 1024)],
    ['900 KiB of another', 'C'.repeat(900 * 1024)],
    ['1 MiB of spaces', ' '.repeat(1024 * 1024)],
    ['1 MiB of punctuation', '!'.repeat(1024 * 1024)],
    ['long runs between words', Array.from({ length: 2_000 }, () => 'x'.repeat(300)).join(' ')],
  ])('%s: counted off this thread, never holding its event loop 100 ms', async (_, text) => {
    // How fast is measured end to end (test-e2e/hostile-input); here: a bounded count, and a free event loop.
    const { tokens, longestStall } = await countWatchingTheLoop(text);
    expect(tokens).toBeGreaterThan(7);
    expect(tokens).toBeLessThanOrEqual(text.length + 7);
    expect(longestStall).toBeLessThan(100);
  });

  it('stays close to the reference where the reference can still be asked (a 2,000-letter run)', async () => {
    const text = `start ${'A'.repeat(2_000)} end`;
    const counted = await countPromptTokens(null, [{ role: 'user', content: text }]);
    const exact = exactCount(text);
    expect(Math.abs(counted - exact) / exact).toBeLessThan(0.25);
  });
});

import { describe, expect, it } from 'vitest';
import { utilityModelOf } from '@hangar/platform';
import { firstKept, roomForHistory, summaryBound, transcriptOf } from '../src/runs/compaction.js';

const message = (role: string, length: number) => ({ role, content: 'x'.repeat(length) });

describe('history compaction: what is kept', () => {
  it('keeps the newest messages whose share of the history’s tokens fits the room left', () => {
    // 860 characters at 215 tokens: 4 characters a token.
    const history = [message('user', 400), message('assistant', 300), message('user', 100), message('assistant', 60)];
    expect(firstKept(history, 215, 10)).toBe(4);
    expect(firstKept(history, 215, 20)).toBe(3);
    expect(firstKept(history, 215, 40)).toBe(2);
    expect(firstKept(history, 215, 120)).toBe(1);
    expect(firstKept(history, 215, 215)).toBe(0);
  });

  it('leaves room for a summary of at most a quarter of the allowed prompt and 2,048 tokens, and a tenth spare', () => {
    expect(summaryBound(160)).toBe(64);
    expect(summaryBound(4000)).toBe(1000);
    expect(summaryBound(100_000)).toBe(2048);
    expect(roomForHistory(1000, 300)).toBe(1000 - 300 - 250 - 100);
    expect(roomForHistory(1000, 700)).toBeLessThan(0);
  });

  it('summarizes the newest part of a transcript longer than the utility model is given', () => {
    const messages = [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'second' },
    ];
    expect(transcriptOf(messages, 1000)).toBe('user: first\n\nassistant: second');
    expect(transcriptOf(messages, 17)).toBe('assistant: second');
  });

  it('reads UtilityModel as provider/model, the model keeping any further slash', () => {
    expect(utilityModelOf(null)).toBeUndefined();
    expect(utilityModelOf('openai/gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(utilityModelOf('local/org/model')).toEqual({ provider: 'local', model: 'org/model' });
  });
});

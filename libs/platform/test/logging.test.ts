import { resolveLogFormat } from '@hangar/platform';
import { describe, expect, it } from 'vitest';

describe('Logging:Format', () => {
  it('is readable on a terminal and JSON elsewhere unless forced', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });
});

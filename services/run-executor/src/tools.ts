import { HangarError } from '@hangar/platform';

/** Executors of the built-in catalog tools (the catalog itself is the agent registry's). */
export const BUILT_IN_EXECUTORS: Record<string, (input: Record<string, unknown>) => Promise<unknown>> = {
  async clock(input) {
    const timeZone = typeof input.timeZone === 'string' && input.timeZone ? input.timeZone : 'UTC';
    const now = new Date();
    let local: string;
    try {
      local = new Intl.DateTimeFormat('en-CA', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hour12: false,
      }).format(now);
    } catch {
      throw new HangarError('validation', `unknown time zone "${timeZone}"`);
    }
    return { utc: now.toISOString(), timeZone, local };
  },
};

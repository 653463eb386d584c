import { z } from 'zod';

/**
 * Value parsers shared by the configuration schema. Environment variables arrive as strings, a
 * config file as JSON/YAML values; each parser accepts both spellings of the same value.
 */

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
// .NET TimeSpan style `[d.]hh:mm:ss[.fff]`, as the SPEC's host platform writes durations.
const TIMESPAN = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/;
const SHORTHAND = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** Parses `00:00:30`, `1.00:00:00`, `30s`, `250ms`, `5m`, `2h`, `1d` into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  const span = TIMESPAN.exec(value);
  if (span) {
    const [, days, hours, minutes, seconds, fraction] = span;
    const ms = fraction ? Number(`0.${fraction}`) * 1000 : 0;
    return ((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000 + ms;
  }
  const short = SHORTHAND.exec(value);
  if (short) return Math.round(Number(short[1]) * DURATION_UNITS[short[2]]);
  return undefined;
}

/** A duration in milliseconds. */
export const duration = () =>
  z.preprocess(
    (input) => (typeof input === 'string' ? (parseDuration(input) ?? input) : input),
    z.number({ error: 'expected a duration such as "00:00:30", "30s", "5m" or "250ms"' }).nonnegative(),
  );

export const bool = () =>
  z.preprocess(
    (input) => {
      if (typeof input !== 'string') return input;
      const lowered = input.trim().toLowerCase();
      return lowered === 'true' ? true : lowered === 'false' ? false : input;
    },
    z.boolean({ error: 'expected true or false' }),
  );

const numeric = (input: unknown) =>
  typeof input === 'string' && input.trim() !== '' && Number.isFinite(Number(input)) ? Number(input) : input;

export const int = () => z.preprocess(numeric, z.number({ error: 'expected a number' }).int('expected a whole number'));
export const num = () => z.preprocess(numeric, z.number({ error: 'expected a number' }));

/** A list, written as an array, as indexed keys (`Key__0`, `Key__1`) or as one comma-separated string. */
export const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((input) => {
    if (typeof input === 'string')
      return input
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);
    if (input && typeof input === 'object' && !Array.isArray(input)) {
      const keys = Object.keys(input);
      if (keys.every((key) => /^\d+$/.test(key))) {
        return keys.sort((a, b) => Number(a) - Number(b)).map((key) => (input as Record<string, unknown>)[key]);
      }
    }
    return input;
  }, z.array(item));

/** A nullable setting whose default is null: an empty string also means "unset". */
export const nullable = <T extends z.ZodType>(inner: T) =>
  z.preprocess((input) => (input === '' ? null : input), inner.nullable()).default(null);

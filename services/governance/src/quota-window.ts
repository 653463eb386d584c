import type { QuotaPeriod } from './quota.repository.js';

function zoned(date: Date, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(date)
      .map((part) => [part.type, Number(part.value)]),
  ) as Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>;
  return parts;
}

/** The instant at which the wall clock of `timeZone` shows the given local time. */
function fromLocal(timeZone: string, year: number, month: number, day: number, hour: number): Date {
  const wanted = Date.UTC(year, month - 1, day, hour);
  let instant = wanted;
  // Two rounds settle the zone's offset, also across a daylight-saving change.
  for (let round = 0; round < 2; round += 1) {
    const shown = zoned(new Date(instant), timeZone);
    const shownAsUtc = Date.UTC(shown.year, shown.month - 1, shown.day, shown.hour, shown.minute, shown.second);
    instant += wanted - shownAsUtc;
  }
  return new Date(instant);
}

/** The window of a quota period that contains `now`, by the wall clock of `timeZone` (Quotas:TimeZone). */
export function quotaWindow(period: QuotaPeriod, timeZone: string, now = new Date()): { start: Date; end: Date } {
  const local = zoned(now, timeZone);
  switch (period) {
    case 'Hour':
      return {
        start: fromLocal(timeZone, local.year, local.month, local.day, local.hour),
        end: fromLocal(timeZone, local.year, local.month, local.day, local.hour + 1),
      };
    case 'Day':
      return {
        start: fromLocal(timeZone, local.year, local.month, local.day, 0),
        end: fromLocal(timeZone, local.year, local.month, local.day + 1, 0),
      };
    case 'Month':
      return { start: fromLocal(timeZone, local.year, local.month, 1, 0), end: fromLocal(timeZone, local.year, local.month + 1, 1, 0) };
  }
}

/** Throws a clear error for a time zone the runtime does not know. */
export function checkTimeZone(timeZone: string) {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new Error(`Quotas:TimeZone: "${timeZone}" is not a time zone this runtime knows (use an IANA name such as Europe/Berlin)`);
  }
}

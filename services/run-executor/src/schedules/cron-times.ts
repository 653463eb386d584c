import { Cron } from 'croner';

/** A schedule's times: a five-field cron expression read in an IANA time zone (croner does the calendar). */
export interface CronTimes {
  /** The first fire time strictly after `after`. */
  nextAfter(after: Date): Date | null;
  /** The latest fire time at or before `now`, never before `from`: the one a late scheduler fires. */
  latestDue(from: Date, now: Date): Date;
}

/** Why the expression or zone cannot be used; empty when both are fine. */
export function cronProblems(cron: string, timeZone: string): Array<{ path: string; message: string }> {
  const problems = [];
  if (!isTimeZone(timeZone)) problems.push({ path: 'timeZone', message: `"${timeZone}" is not an IANA time zone` });
  if (cron.trim().split(/\s+/).length !== 5) {
    problems.push({ path: 'cron', message: 'must have five fields: minute hour day-of-month month day-of-week' });
  } else {
    try {
      const times = new Cron(cron, { paused: true, timezone: isTimeZone(timeZone) ? timeZone : undefined });
      if (!times.nextRun()) problems.push({ path: 'cron', message: 'never fires' });
    } catch (error) {
      problems.push({ path: 'cron', message: (error as Error).message });
    }
  }
  return problems;
}

const isTimeZone = (timeZone: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
};

/** The times of an expression that passed {@link cronProblems}. */
export function cronTimes(cron: string, timeZone: string): CronTimes {
  const times = new Cron(cron, { paused: true, timezone: timeZone });
  return {
    nextAfter: (after) => times.nextRun(after),
    latestDue(from, now) {
      // previousRuns counts times strictly before its date: one millisecond on includes `now` itself.
      const [latest] = times.previousRuns(1, new Date(now.getTime() + 1));
      return latest && latest > from ? latest : from;
    },
  };
}

import type { Caller } from '@hangar/platform';
import type { NewJob } from '../jobs/job.repository.js';
import type { NewRun } from '../runs/run.model.js';

/** A stored schedule (API.md "Schedules"), with what its firings left behind. */
export interface Schedule {
  id: string;
  tenantId: string;
  name: string;
  handlerKey: string;
  cron: string;
  timeZone: string;
  payload: Record<string, unknown>;
  enabled: boolean;
  /** Whom its firings run for: the caller who saved it last. */
  savedBy: Caller;
  /** Null while disabled. */
  nextFireAt: Date | null;
  lastFireAt: Date | null;
  lastRunId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A schedule as it is saved: checked, its next fire time planned. */
export type ScheduleInput = Pick<Schedule, 'name' | 'handlerKey' | 'cron' | 'timeZone' | 'payload' | 'enabled' | 'savedBy' | 'nextFireAt'>;

/** One firing: the fire time it stands for, the time after it, and the queued run it writes. */
export interface Firing {
  fireAt: Date;
  nextFireAt: Date | null;
  run: NewRun;
  job: NewJob;
}

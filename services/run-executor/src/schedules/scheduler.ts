import type { Logger } from '@hangar/platform';
import type { ScheduleRepository } from './schedule.repository.js';
import type { ScheduleService } from './schedule.service.js';

export interface SchedulerSettings {
  /** `Scheduling:PollInterval`: the longest sleep between two looks at the schedules. */
  pollIntervalMs: number;
  /** `Scheduling:MaxItemsPerJob`: a round that fired this many goes on at once (a backlog). */
  maxPerRound: number;
  /** `SingletonExecution`: when enabled, only the holder of the lease fires. */
  singleton: { enabled: boolean; leaseMs: number; ownerId: string };
}

/**
 * Fires due schedules: wakes at the soonest fire time (at most a poll interval away), fires what is
 * due, sleeps again. Every instance may run one; the firing key keeps each fire time to one run,
 * and with SingletonExecution only the lease holder fires at all (renewed every third of the lease).
 */
export function createScheduler(deps: {
  schedules: Pick<ScheduleService, 'fireDue' | 'soonestFireAt'>;
  lease: Pick<ScheduleRepository, 'takeLease' | 'releaseLease'>;
  logger: Logger;
  settings: SchedulerSettings;
}) {
  const { settings, logger } = deps;
  const { singleton } = settings;
  const longestSleep = singleton.enabled ? Math.min(settings.pollIntervalMs, Math.floor(singleton.leaseMs / 3)) : settings.pollIntervalMs;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  let stopped = false;
  let holding = false;

  /** One round; resolves with how long to sleep before the next. */
  async function fireRound(): Promise<number> {
    if (singleton.enabled) {
      holding = await deps.lease.takeLease(singleton.ownerId, singleton.leaseMs);
      if (!holding) return longestSleep;
    }
    const fired = await deps.schedules.fireDue();
    if (fired >= settings.maxPerRound) return 0;
    const soonest = await deps.schedules.soonestFireAt();
    const untilSoonest = soonest ? soonest.getTime() - Date.now() : longestSleep;
    // A schedule still due after its round failed to fire: it is tried again after a full sleep, not in a loop.
    return untilSoonest > 0 ? Math.min(untilSoonest, longestSleep) : longestSleep;
  }

  function next(sleepMs: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      round = fireRound()
        .catch((error) => {
          logger.warn({ err: error }, 'scheduler round failed');
          return longestSleep;
        })
        .then(next);
    }, sleepMs);
  }

  return {
    start: () => next(0),
    /** Stops firing; the lease, when held, is given up so another instance takes over at once. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
      if (holding)
        await deps.lease.releaseLease(singleton.ownerId).catch((error) => logger.warn({ err: error }, 'scheduler lease not released'));
    },
  };
}

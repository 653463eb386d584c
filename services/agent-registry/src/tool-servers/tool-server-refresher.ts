import type { Logger } from '@hangar/platform';
import type { ToolServerService } from './tool-server.service.js';

/** How often the refresher looks for servers due: as often as RefreshInterval, between 1 s and 10 s. */
const LOOK_EVERY_MS = { min: 1_000, max: 10_000 };

/**
 * Rediscovers every enabled tool server of every tenant once its tools are `Mcp:RefreshInterval`
 * old. A failed round (the store away) is logged and the next one tries again.
 */
export function startToolServerRefresher(service: Pick<ToolServerService, 'refreshDue'>, intervalMs: number, logger: Logger) {
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const schedule = () => {
    if (!stopped) timer = setTimeout(tick, Math.max(LOOK_EVERY_MS.min, Math.min(intervalMs, LOOK_EVERY_MS.max)));
  };
  const tick = () => {
    round = service
      .refreshDue(intervalMs)
      .catch((error: unknown) => logger.warn({ err: error }, 'tool servers could not be refreshed; the next round tries again'))
      .finally(schedule);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}

import { classifyError, type Logger } from '@hangar/platform';

/** Runs a recording step; recording never blocks the agent's answer (SPEC Errors 4), so a failure is logged and skipped. */
export type Recorder = <T>(what: string, work: () => Promise<T>) => Promise<T | undefined>;

export function createRecorder(logger: Logger): Recorder {
  return async (what, work) => {
    try {
      return await work();
    } catch (error) {
      logger.error({ err: error, what }, 'run recording failed');
      return undefined;
    }
  };
}

/** Pauses between attempts of a write that must outlast a short engine outage (about 4 s in all). */
const RETRY_DELAYS_MS = [250, 500, 1000, 2000];

/**
 * Runs a write again while it fails because its engine is away (a connection-class failure); any
 * other failure, or the last attempt's, is thrown. For the writes a run's end depends on.
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= RETRY_DELAYS_MS.length || classifyError(error)?.status !== 503) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
    }
  }
}

import type { RunFailure } from './model-turns.js';

/** A run stopped from outside for a reason other than a cancel: it ends Failed with this errorType. */
export class RunInterruption extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A queued run stopped so that its job goes back to the queue (its instance is stopping): it is
 * not ended here, the next worker that leases the job executes it again.
 */
export class JobHandedBack extends Error {
  constructor() {
    super('the job was handed back to the queue');
  }
}

/** How a run whose signal was aborted ends: canceled, unless the abort names another reason. */
export function abortFailure(signal: AbortSignal): RunFailure {
  const reason = signal.reason;
  if (reason instanceof RunInterruption) return { errorType: reason.errorType, message: reason.message };
  return { errorType: 'canceled', message: 'the run was canceled' };
}

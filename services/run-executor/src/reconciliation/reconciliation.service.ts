import type { Caller, HangarConfig, Logger } from '@hangar/platform';
import { envelopeOf } from '../events/event-writer.js';
import type { RunExecution } from '../runs/run-execution.js';
import type { StartRunRequest } from '../runs/run.model.js';
import type { ReconciliationRepository } from './reconciliation.repository.js';

export interface ReconciliationDeps {
  repository: Pick<ReconciliationRepository, 'claimOrphans'>;
  execution: RunExecution;
  /** Told when claiming orphans stored events, so the outbox relay ships them soon. */
  eventsStored: () => void;
  /** Without an outbox: hands stored events to the (in-process) event log. */
  shipDirect?: (records: Array<{ key: string; value: string }>) => Promise<void>;
  logger: Logger;
  settings: Pick<HangarConfig, 'RunReconciliation' | 'RunContinuation'>;
}

/** Orphaned interactive runs (their process stopped beating): continued here while `RunContinuation` allows, closed otherwise. */
export function createReconciliation(deps: ReconciliationDeps) {
  const { RunReconciliation, RunContinuation } = deps.settings;
  const continuationEnabled = RunReconciliation.Enabled && RunContinuation.Enabled;
  /** Orphaned runs this process restarted; a graceful stop waits for them. */
  const continuing = new Set<Promise<void>>();

  return {
    /** One reconciliation scan. */
    async reconcileOrphans() {
      const { failed, continued, stored } = await deps.repository.claimOrphans(
        RunReconciliation.OrphanThreshold,
        RunReconciliation.MaxRunsPerScan,
        continuationEnabled ? RunContinuation.MaxAttempts : 0,
      );
      if (failed.length || continued.length) deps.eventsStored();
      if (deps.shipDirect && stored.length)
        await deps.shipDirect(
          stored.map(({ target, event }) => ({ key: target.rootRunId, value: JSON.stringify(envelopeOf(target, event)) })),
        );
      for (const { runId, payload, attempt } of continued) {
        const { caller, request } = payload as { caller: Caller; request: StartRunRequest };
        const restart = (async () => {
          for await (const _update of deps.execution.execute(caller, request, {
            signal: new AbortController().signal,
            continuedRunId: runId,
          })) {
            // the client that started the run is gone; its outcome is in the record and the events
          }
        })()
          .catch((error) => deps.logger.error({ err: error, runId }, 'continued run failed'))
          .finally(() => continuing.delete(restart));
        continuing.add(restart);
        deps.logger.warn({ runId, attempt }, 'continuing an orphaned run');
      }
      if (failed.length) deps.logger.warn({ runs: failed }, 'closed orphaned runs');
    },

    /** Waits for the orphaned runs this process restarted. */
    drain: () => Promise.all(continuing),
  };
}

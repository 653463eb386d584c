import type { RunExecutorServiceDefinition } from '@hangar/contracts';
import { HangarError, type CallerOptions } from '@hangar/platform';
import type { Client } from 'nice-grpc';

type RunsClient = Client<typeof RunExecutorServiceDefinition, CallerOptions>;

const refusal = () =>
  new HangarError('unavailable', 'this instance is shutting down and takes no new runs; retry on another', {}, 'draining');

/**
 * While the gateway drains (`Drain:Enabled`, after SIGTERM), a request that would start a run is
 * answered 503 `draining` before anything starts: a run is never accepted and then dropped.
 * Reading runs, their events and deciding approvals go on.
 */
export function refuseNewRunsWhileDraining(runs: RunsClient, draining: () => boolean): RunsClient {
  return {
    ...runs,
    startRun: (request, options) =>
      draining()
        ? (async function* () {
            throw refusal();
          })()
        : runs.startRun(request, options),
    enqueueRun: (request, options) => (draining() ? Promise.reject(refusal()) : runs.enqueueRun(request, options)),
  };
}

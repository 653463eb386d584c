import { randomUUID } from 'node:crypto';
import type { Caller, HangarConfig, Logger } from '@hangar/platform';
import type { SpendQuotaGateway } from '../clients/ports.js';
import { retryWhileUnavailable } from '../recording.js';
import { admitUnderQuotas } from '../runs/admission.js';

export interface SpendQuotaDeps {
  gateway: SpendQuotaGateway;
  logger: Logger;
  settings: Pick<HangarConfig, 'Quotas'>;
}

/**
 * Quotas for spend outside any run: an image generation, speech, a transcription. Such a request
 * is admitted while no Cost rule for every agent of the tenant is used up (429 `quota_exceeded`
 * before the provider is asked; `Quotas:AllowOnStoreFailure` decides when governance cannot
 * answer), and what it cost is counted toward those rules once it is paid for. An agent's image
 * tool is not this: its images are part of its run's cost, which the run's end counts.
 */
export function createSpendQuota(deps: SpendQuotaDeps) {
  return {
    admit: (caller: Caller): Promise<void> => admitUnderQuotas(deps.settings, deps.logger, 'spend', () => deps.gateway.admit(caller)),

    /**
     * Counts what was paid for (no price: nothing to count), as run usage is counted whether or not
     * quotas are on. The work is done by then: a count that cannot be made is logged, never the caller's failure.
     */
    async count(caller: Caller, cost: number | null): Promise<void> {
      if (!cost) return;
      const spend = { id: randomUUID(), cost, at: new Date() };
      try {
        await retryWhileUnavailable(() => deps.gateway.count(caller, spend));
      } catch (error) {
        deps.logger.warn({ err: (error as Error).message, tenantId: caller.tenantId, cost }, 'spend not counted toward quotas');
      }
    },
  };
}

export type SpendQuota = ReturnType<typeof createSpendQuota>;

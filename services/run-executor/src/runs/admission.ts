import { HangarError, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { ExceededQuota, QuotaAdmission } from '../clients/ports.js';

export interface AdmissionDeps {
  admitRun: QuotaAdmission;
  logger: Logger;
  settings: Pick<HangarConfig, 'Quotas'>;
}

/**
 * SPEC Agents 11: a run starts only while no quota rule that covers its agent is used up; a
 * used-up rule refuses it with 429 before anything starts. When governance cannot answer,
 * `Quotas:AllowOnStoreFailure` decides. Every way a run starts (streamed, one response, queued)
 * passes here; a child run is part of its root's admission.
 */
export function createAdmission(deps: AdmissionDeps) {
  return async function admit(caller: Caller, agentName: string): Promise<void> {
    await admitUnderQuotas(deps.settings, deps.logger, 'run', () => deps.admitRun(caller, agentName));
  };
}

/**
 * Asks governance while `Quotas:Enabled`; a used-up rule is thrown as 429, and when governance
 * cannot answer `Quotas:AllowOnStoreFailure` decides (a run, or spend outside any run).
 */
export async function admitUnderQuotas(
  settings: Pick<HangarConfig, 'Quotas'>,
  logger: Logger,
  what: 'run' | 'spend',
  ask: () => Promise<ExceededQuota | undefined>,
): Promise<void> {
  if (!settings.Quotas.Enabled) return;
  let exceeded;
  try {
    exceeded = await ask();
  } catch (error) {
    if (!settings.Quotas.AllowOnStoreFailure) throw error;
    logger.warn({ err: (error as Error).message }, `quota store unavailable; ${what} admitted (Quotas:AllowOnStoreFailure)`);
    return;
  }
  if (exceeded) throw quotaExceeded(exceeded);
}

/** The 429 of a used-up rule (API.md: `quota`, `limit`, `used`, `resetsAt`; the gateway adds `Retry-After`). */
function quotaExceeded(exceeded: ExceededQuota): HangarError {
  return new HangarError(
    'tooManyRequests',
    `quota "${exceeded.name}" is used up (${exceeded.used} of ${exceeded.limit} ${exceeded.metric.toLowerCase()} per ${exceeded.period.toLowerCase()})`,
    { quota: exceeded.name, limit: exceeded.limit, used: exceeded.used, resetsAt: exceeded.resetsAt },
    'quota_exceeded',
  );
}

export type Admission = ReturnType<typeof createAdmission>;

import type { governancePb } from '@hangar/contracts';
import { HangarError, type Caller, type HangarConfig, type Logger } from '@hangar/platform';
import type { GatewayContext } from '../gateway.context.js';

/**
 * SPEC Agents 11: after run authorization, quota. A used-up rule refuses the run with 429 before
 * anything starts. When governance cannot answer, `Quotas:AllowOnStoreFailure` decides.
 */
export async function admitRun(
  agentName: string,
  caller: Caller,
  governance: GatewayContext['governance'],
  config: HangarConfig,
  logger: Logger,
) {
  if (!config.Quotas.Enabled) return;
  let decision: governancePb.AdmitRunResponse;
  try {
    decision = await governance.admitRun({ agentName }, { caller });
  } catch (error) {
    if (!config.Quotas.AllowOnStoreFailure) throw error;
    logger.warn({ err: (error as Error).message }, 'quota store unavailable; run admitted (Quotas:AllowOnStoreFailure)');
    return;
  }
  if (decision.admitted) return;
  const rule = decision.exceeded!;
  throw new HangarError(
    'tooManyRequests',
    `quota "${rule.name}" is used up (${rule.used} of ${rule.limit} ${rule.metric.toLowerCase()} per ${rule.period.toLowerCase()})`,
    { quota: rule.name, limit: rule.limit, used: rule.used, resetsAt: rule.resetsAt },
    'quota_exceeded',
  );
}

import { governancePb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { AuditEntry } from './audit.repository.js';
import type { GovernanceService } from './governance.service.js';

const { IdempotencyOutcome } = pb;

const OUTCOME = {
  started: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_STARTED,
  replay: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_REPLAY,
  in_progress: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_IN_PROGRESS,
  mismatch: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_MISMATCH,
} as const;

const entryToProto = (entry: AuditEntry): pb.AuditEntry => ({ ...entry, userId: entry.userId ?? undefined });

export function governanceGrpc(service: GovernanceService): pb.GovernanceServiceImplementation<CallerContext> {
  return {
    async recordAudit({ action, resourceType, resourceId, details }, { caller }) {
      return { entry: entryToProto(await service.recordAudit(caller, { action, resourceType, resourceId, details: details ?? {} })) };
    },
    async beginIdempotentRequest({ scope, key, fingerprint, inProgressTimeoutMs }, { caller }) {
      const decided = await service.beginIdempotent(caller, { scope, key, fingerprint, lockMs: inProgressTimeoutMs });
      return {
        outcome: OUTCOME[decided.outcome],
        response: decided.outcome === 'replay' ? decided.response : undefined,
      };
    },
    async completeIdempotentRequest({ scope, key, response }, { caller }) {
      await service.completeIdempotent(
        caller,
        { scope, key },
        { status: response?.status ?? 200, headers: response?.headers ?? {}, body: response?.body ?? '' },
      );
      return {};
    },
    async releaseIdempotentRequest({ scope, key }, { caller }) {
      await service.releaseIdempotent(caller, { scope, key });
      return {};
    },
    async listAudit({ action, resourceType, resourceId, skip, take }, { caller }) {
      return { entries: (await service.listAudit(caller, { action, resourceType, resourceId, skip, take })).map(entryToProto) };
    },
  };
}

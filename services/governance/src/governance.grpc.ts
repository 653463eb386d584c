import { governancePb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import { apiKeyGrpc } from './api-keys/api-key.grpc.js';
import type { ApiKeyService } from './api-keys/api-key.service.js';
import type { AuditEntry } from './audit.repository.js';
import type { GovernanceService, QuotaStatus } from './governance.service.js';
import type { QuotaRuleRow } from './quota.repository.js';
import { tenantGrpc } from './tenants/tenant.grpc.js';
import type { TenantService } from './tenants/tenant.service.js';

const { IdempotencyOutcome } = pb;

const OUTCOME = {
  started: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_STARTED,
  replay: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_REPLAY,
  in_progress: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_IN_PROGRESS,
  mismatch: IdempotencyOutcome.IDEMPOTENCY_OUTCOME_MISMATCH,
} as const;

const quotaToProto = (status: QuotaStatus): pb.QuotaRule => ({ ...status, agentName: status.agentName ?? undefined });

const entryToProto = (entry: AuditEntry): pb.AuditEntry => ({ ...entry, userId: entry.userId ?? undefined });

export function governanceGrpc(
  service: GovernanceService,
  apiKeys: ApiKeyService,
  tenants: TenantService,
): pb.GovernanceServiceImplementation<CallerContext> {
  return {
    ...apiKeyGrpc(apiKeys),
    ...tenantGrpc(tenants),
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
    async putQuotaRule({ rule }, { caller }) {
      const saved = await service.putQuotaRule(caller, {
        name: rule?.name ?? '',
        metric: (rule?.metric ?? '') as QuotaRuleRow['metric'],
        period: (rule?.period ?? '') as QuotaRuleRow['period'],
        limit: rule?.limit ?? 0,
        agentName: rule?.agentName ?? null,
      });
      return { rule: quotaToProto(saved.rule), created: saved.created };
    },
    async listQuotaRules(_request, { caller }) {
      return { rules: (await service.listQuotaRules(caller)).map(quotaToProto) };
    },
    async deleteQuotaRule({ name }, { caller }) {
      await service.deleteQuotaRule(caller, name);
      return {};
    },
    async admitRun({ agentName }, { caller }) {
      const decision = await service.admitRun(caller, agentName);
      return decision.admitted
        ? { admitted: true, governed: decision.governed }
        : { admitted: false, governed: true, exceeded: quotaToProto(decision.exceeded) };
    },
    async admitSpend(_request, { caller }) {
      const decision = await service.admitSpend(caller);
      return decision.admitted ? { admitted: true } : { admitted: false, exceeded: quotaToProto(decision.exceeded) };
    },
    async countSpend({ id, cost, at }, { caller }) {
      return { counted: await service.countSpend(caller, { id, cost, at: new Date(at ?? Number.NaN) }) };
    },
    async listAudit({ action, resourceType, resourceId, skip, take }, { caller }) {
      return { entries: (await service.listAudit(caller, { action, resourceType, resourceId, skip, take })).map(entryToProto) };
    },
  };
}

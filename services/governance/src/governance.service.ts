import { clampPage, validationError, type Caller } from '@hangar/platform';
import type { AuditEntry, AuditFilter, AuditRepository } from './audit.repository.js';
import type { BeginOutcome, IdempotencyRepository, StoredResponse } from './idempotency.repository.js';

/** SPEC Retention: idempotency keys are kept one day, not bindable from configuration. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

type IdempotencyTarget = { scope: string; key: string };

const ACTION = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/** Governance rules; so far the audit trail (who did what to which resource, per tenant). */
export function createGovernanceService(deps: { audit: AuditRepository; idempotency: IdempotencyRepository }) {
  const target = (caller: Caller, { scope, key }: IdempotencyTarget) => {
    const errors = [
      ...(scope.trim() ? [] : [{ path: 'scope', message: 'is required' }]),
      ...(key.trim() ? [] : [{ path: 'key', message: 'is required' }]),
    ];
    if (errors.length) throw validationError('the idempotency key is not valid', errors);
    return { tenantId: caller.tenantId, scope, key };
  };

  return {
    /** Decides what a request under an idempotency key does: execute, replay, wait, or refuse. */
    beginIdempotent(caller: Caller, request: IdempotencyTarget & { fingerprint: string; lockMs: number }): Promise<BeginOutcome> {
      if (!request.fingerprint)
        throw validationError('a request fingerprint is required', [{ path: 'fingerprint', message: 'is required' }]);
      return deps.idempotency.begin(target(caller, request), request.fingerprint, Math.max(1000, request.lockMs), IDEMPOTENCY_RETENTION_MS);
    },

    completeIdempotent: (caller: Caller, request: IdempotencyTarget, response: StoredResponse) =>
      deps.idempotency.complete(target(caller, request), response),

    releaseIdempotent: (caller: Caller, request: IdempotencyTarget) => deps.idempotency.release(target(caller, request)),

    purgeExpiredIdempotencyKeys: () => deps.idempotency.purgeExpired(),

    /** Appends an entry for the caller: actor and user come from the caller, never from the request. */
    async recordAudit(
      caller: Caller,
      entry: { action: string; resourceType: string; resourceId: string; details: Record<string, unknown> },
    ): Promise<AuditEntry> {
      const errors = [
        ...(ACTION.test(entry.action) ? [] : [{ path: 'action', message: 'must look like "resource.verb"' }]),
        ...(entry.resourceType.trim() ? [] : [{ path: 'resourceType', message: 'is required' }]),
        ...(entry.resourceId.trim() ? [] : [{ path: 'resourceId', message: 'is required' }]),
      ];
      if (errors.length) throw validationError('the audit entry is not valid', errors);
      return deps.audit.append({
        tenantId: caller.tenantId,
        actor: caller.actor,
        userId: caller.userId ?? null,
        action: entry.action,
        resourceType: entry.resourceType,
        resourceId: entry.resourceId,
        details: entry.details,
      });
    },

    listAudit(caller: Caller, filter: AuditFilter): Promise<AuditEntry[]> {
      return deps.audit.list(caller.tenantId, { ...filter, ...clampPage(filter.skip, filter.take) });
    },
  };
}

export type GovernanceService = ReturnType<typeof createGovernanceService>;

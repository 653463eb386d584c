import { clampPage, validationError, type Caller } from '@hangar/platform';
import type { AuditEntry, AuditFilter, AuditRepository } from './audit.repository.js';

const ACTION = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/** Governance rules; so far the audit trail (who did what to which resource, per tenant). */
export function createGovernanceService(deps: { audit: AuditRepository }) {
  return {
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

import type { governancePb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { AuditEntry } from './audit.repository.js';
import type { GovernanceService } from './governance.service.js';

const entryToProto = (entry: AuditEntry): pb.AuditEntry => ({ ...entry, userId: entry.userId ?? undefined });

export function governanceGrpc(service: GovernanceService): pb.GovernanceServiceImplementation<CallerContext> {
  return {
    async recordAudit({ action, resourceType, resourceId, details }, { caller }) {
      return { entry: entryToProto(await service.recordAudit(caller, { action, resourceType, resourceId, details: details ?? {} })) };
    },
    async listAudit({ action, resourceType, resourceId, skip, take }, { caller }) {
      return { entries: (await service.listAudit(caller, { action, resourceType, resourceId, skip, take })).map(entryToProto) };
    },
  };
}

import type { Caller } from './grpc/caller.js';
import type { Logger } from './logging.js';

/** Writes one entry of the audit trail (the governance service keeps it) for the caller's tenant. */
export type AuditWriter = (
  caller: Caller,
  entry: { action: string; resourceType: string; resourceId: string; details: Record<string, unknown> },
) => Promise<void>;

/** An audit writer whose failures are logged with the whole entry: the change it describes stands. */
export function auditOrLog(audit: AuditWriter, logger: Logger): AuditWriter {
  return async (caller, entry) => {
    try {
      await audit(caller, entry);
    } catch (error) {
      logger.error({ err: error, audit: { ...entry, tenantId: caller.tenantId, actor: caller.actor } }, 'audit entry could not be written');
    }
  };
}

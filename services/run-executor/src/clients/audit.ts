import type { Logger } from '@hangar/platform';
import type { AuditWriter } from './ports.js';

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

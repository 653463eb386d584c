import { GovernanceServiceDefinition } from '@hangar/contracts';
import { grpcServiceModule } from '@hangar/platform';
import { createAuditRepository, type GovernanceDatabase } from './audit.repository.js';
import { governanceGrpc } from './governance.grpc.js';
import { createGovernanceService } from './governance.service.js';
import { governanceMigrations } from './migrations/index.js';

/** The Governance process: so far the audit trail other services write to and the gateway reads. */
export const governanceModule = grpcServiceModule({
  name: 'Governance',
  async setup({ engines }, grpc) {
    const database = await engines.storage.open<GovernanceDatabase>('governance', governanceMigrations);
    const service = createGovernanceService({ audit: createAuditRepository(database.db) });
    grpc.server.add(GovernanceServiceDefinition, governanceGrpc(service));
  },
});

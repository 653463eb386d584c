import { grpcServiceModule } from '@hangar/platform';

/**
 * The Governance process: a gRPC server with the standard health service and graceful shutdown.
 * Its rules, repository and RPCs arrive with the governance issues.
 */
export const governanceModule = grpcServiceModule({
  name: 'Governance',
  async setup() {},
});

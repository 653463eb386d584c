import { grpcServiceModule } from '@hangar/platform';

/**
 * The Session process: a gRPC server with the standard health service and graceful shutdown.
 * Its rules, repository and RPCs arrive with the sessions issue (#4).
 */
export const sessionModule = grpcServiceModule({
  name: 'Session',
  async setup() {},
});

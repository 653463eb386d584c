import { grpcServiceModule } from '@hangar/platform';

/**
 * The RunExecutor process: a gRPC server with the standard health service and graceful shutdown.
 * Its rules, repository and RPCs arrive with the run-engine issue (#3).
 */
export const runExecutorModule = grpcServiceModule({
  name: 'RunExecutor',
  async setup() {},
});

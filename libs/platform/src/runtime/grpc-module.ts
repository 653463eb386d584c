import type { ServiceName } from '../config/schema.js';
import { createGrpcServer, type HangarGrpcServer } from '../grpc/server.js';
import { listenForScrapes } from '../metrics/metrics-listener.js';
import type { HangarModule, ModuleContext } from './modules.js';

/**
 * A module whose surface is one gRPC server: `setup` registers the service implementation(s)
 * and returns what must be closed after the server stops, and how its work drains.
 */
export function grpcServiceModule(options: {
  name: ServiceName;
  dependsOn?: ServiceName[];
  setup(
    context: ModuleContext,
    grpc: HangarGrpcServer,
  ): Promise<{ close?(): Promise<void>; drain?(deadline: AbortSignal): Promise<void> } | void>;
}): HangarModule {
  return {
    name: options.name,
    dependsOn: options.dependsOn ?? [],
    async start(context) {
      const grpc = createGrpcServer(context.logger, context.metrics.meter);
      const resources = (await options.setup(context, grpc)) ?? {};
      const endpoint = context.config.Services[options.name];
      const port = await grpc.listen(endpoint.Host, endpoint.Port);
      const scrapes =
        endpoint.MetricsPort === null
          ? undefined
          : await listenForScrapes({
              metrics: context.metrics,
              host: endpoint.Host,
              port: endpoint.MetricsPort,
              metricsToken: context.config.Hangar.Api.MetricsToken,
              logger: context.logger,
            }).catch(async (error) => {
              await grpc.shutdown();
              await resources.close?.();
              throw error;
            });
      return {
        address: `${endpoint.Host}:${port}`,
        httpPort: scrapes?.port,
        async drain(deadline) {
          // Not serving: the kubelet's readiness probe and load balancers stop sending work here.
          grpc.health.setStatus('unhealthy');
          await resources.drain?.(deadline);
        },
        async stop() {
          await scrapes?.close();
          await grpc.shutdown();
          await resources.close?.();
        },
      };
    },
  };
}

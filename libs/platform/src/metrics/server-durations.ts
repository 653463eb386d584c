import type { Meter } from '@opentelemetry/api';
import { ServerError, Status, type CallContext, type ServerMiddleware, type ServerMiddlewareCall } from 'nice-grpc';
import { DURATION_BUCKETS } from './process-metrics.js';

/** `hangar_http_server_duration_seconds{method,route,status}`; `route` is the route's pattern, never the raw path. */
export function httpServerDurations(meter: Meter) {
  const histogram = meter.createHistogram('hangar_http_server_duration_seconds', {
    description: 'Duration of HTTP requests the gateway answered, in seconds, by method, route pattern and status',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  return (seconds: number, labels: { method: string; route: string; status: number }) => histogram.record(seconds, labels);
}

/** `hangar_grpc_server_duration_seconds{method,code}`: each call of this process's gRPC server, streams until they end. */
export function grpcServerDurations(meter: Meter): ServerMiddleware {
  const histogram = meter.createHistogram('hangar_grpc_server_duration_seconds', {
    description: 'Duration of gRPC calls a service answered, in seconds, by method and status code',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  return async function* measured<Request, Response>(call: ServerMiddlewareCall<Request, Response>, context: CallContext) {
    const started = performance.now();
    let code = Status.OK;
    try {
      return yield* call.next(call.request, context);
    } catch (error) {
      code = error instanceof ServerError ? error.code : (error as Error)?.name === 'AbortError' ? Status.CANCELLED : Status.UNKNOWN;
      throw error;
    } finally {
      histogram.record((performance.now() - started) / 1000, { method: call.method.path, code: Status[code] });
    }
  };
}

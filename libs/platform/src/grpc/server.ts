import { context as otelContext, trace, SpanStatusCode, type Context, type Meter } from '@opentelemetry/api';
import {
  composeServerMiddleware,
  createServer,
  ServerError,
  Status,
  type CallContext,
  type Server,
  type ServerMiddlewareCall,
  type ServerMiddleware,
} from 'nice-grpc';
import { HealthDefinition, HealthServiceImpl, HealthState } from 'nice-grpc-server-health';
import { classifyError, ERROR_KINDS, type HangarError } from '../errors.js';
import type { Logger } from '../logging.js';
import { grpcServerDurations } from '../metrics/server-durations.js';
import { extractContext, SpanKind, tracer } from '../telemetry.js';
import { readCaller, type Caller } from './caller.js';
import { hostInProcess, type ServiceDefinitionLike } from './in-process.js';
import { addReflection } from './reflection.js';

export interface CallerContext {
  caller: Caller;
}

/**
 * Problem details travel from service to gateway as JSON in the gRPC status message, so a
 * 404 raised three calls deep still reaches the client with its errorType and extensions.
 */
export interface WireProblem {
  kind: HangarError['kind'];
  message: string;
  errorType: string;
  extensions: Record<string, unknown>;
}

function serverMiddleware(logger: Logger): ServerMiddleware<CallerContext> {
  return async function* hangarServerMiddleware<Request, Response>(
    call: ServerMiddlewareCall<Request, Response, CallerContext>,
    context: CallContext,
  ) {
    const carrier = Object.fromEntries([...context.metadata].map(([key, values]) => [key, String(values[0])]));
    return yield* traced(call.method.path, extractContext(carrier), async function* () {
      // Health checks and reflection describe the server, not a tenant's data: they need no caller.
      const describesServer = call.method.path.startsWith('/grpc.health.v1.') || call.method.path.startsWith('/grpc.reflection.');
      const caller = readCaller(context.metadata);
      if (!caller && !describesServer) throw new ServerError(Status.UNAUTHENTICATED, 'missing x-hangar-tenant metadata');
      try {
        return yield* call.next(call.request, { ...context, caller: caller ?? { tenantId: '', actor: '' } });
      } catch (error) {
        throw toServerError(error, logger, call.method.path);
      }
    });
  };
}

/** Runs a middleware body inside a server span, keeping the span active across every resume. */
async function* traced<Response>(
  path: string,
  parent: Context,
  body: () => AsyncGenerator<Response, Response | void, undefined>,
): AsyncGenerator<Response, Response | void, undefined> {
  const span = tracer().startSpan(path, { kind: SpanKind.SERVER }, parent);
  const spanContext = trace.setSpan(parent, span);
  const iterator = body();
  try {
    while (true) {
      const step = await otelContext.with(spanContext, () => iterator.next());
      if (step.done) return step.value;
      yield step.value;
    }
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

function toServerError(error: unknown, logger: Logger, path: string): unknown {
  if (error instanceof ServerError) return error;
  const known = classifyError(error);
  if (known) {
    if (known !== error) logger.warn({ err: error, path }, 'answered UNAVAILABLE: a backing store is unreachable');
    const problem: WireProblem = { kind: known.kind, message: known.message, errorType: known.errorType, extensions: known.extensions };
    return new ServerError(ERROR_KINDS[known.kind].grpc, JSON.stringify(problem));
  }
  if ((error as Error)?.name === 'AbortError') return error;
  logger.error({ err: error, path }, 'unhandled error in gRPC handler');
  return new ServerError(Status.INTERNAL, 'internal error');
}

export interface HangarGrpcServer {
  server: Server<CallerContext>;
  health: HealthState;
  /** Binds and starts serving; resolves to the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting calls, lets running calls finish, then closes. */
  shutdown(): Promise<void>;
}

/**
 * A gRPC server with tracing, caller and error middleware, the standard grpc.health.v1 service,
 * and server reflection describing the Hangar services added to it; with a `meter` (a server of a
 * Hangar process, not one a test builds alone), call durations too.
 */
export function createGrpcServer(logger: Logger, meter?: Meter): HangarGrpcServer {
  const middleware = meter ? composeServerMiddleware(grpcServerDurations(meter), serverMiddleware(logger)) : serverMiddleware(logger);
  const base = createServer().use(middleware);
  const services: Array<{ definition: ServiceDefinitionLike; implementation: object }> = [];
  let unhost: (() => void) | undefined;
  const server: Server<CallerContext> = {
    ...base,
    add(definition, implementation) {
      if ('methods' in definition) services.push({ definition: definition as unknown as ServiceDefinitionLike, implementation });
      base.add(definition, implementation);
    },
  };
  const health = HealthState();
  server.add(HealthDefinition, HealthServiceImpl(health));
  return {
    server,
    health,
    async listen(host, port) {
      addReflection(
        base,
        services.flatMap(({ definition }) => definition.fullName ?? []),
      );
      const bound = await server.listen(`${host}:${port}`);
      // Clients in this process reach it without the socket, by the address they are given (see in-process.ts).
      unhost = hostInProcess(`${host}:${bound}`, services, middleware);
      health.setStatus('healthy');
      return bound;
    },
    async shutdown() {
      health.setStatus('unhealthy');
      unhost?.();
      await server.shutdown();
    },
  };
}

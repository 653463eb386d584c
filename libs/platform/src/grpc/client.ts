import {
  ClientError,
  createChannel as createGrpcChannel,
  createClientFactory,
  Metadata,
  Status,
  type CallOptions,
  type Channel,
  type ClientMiddlewareCall,
  type CompatServiceDefinition,
  type Client,
} from 'nice-grpc';
import { HangarError, type ErrorKind } from '../errors.js';
import { injectContext, inSpan, SpanKind } from '../telemetry.js';
import { writeCaller, type Caller } from './caller.js';
import { preferInProcess, type ServiceDefinitionLike } from './in-process.js';
import type { WireProblem } from './server.js';

export interface CallerOptions {
  caller: Caller;
}

async function* hangarClientMiddleware<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions & Partial<CallerOptions>,
) {
  const metadata = Metadata(options.metadata);
  if (options.caller) writeCaller(metadata, options.caller);
  const { caller: _caller, ...rest } = options;
  // Unary calls are the common case; a span around them links gateway and service traces.
  if (!call.responseStream) {
    return await inSpan(call.method.path, { kind: SpanKind.CLIENT }, async () => {
      for (const [key, value] of Object.entries(injectContext({}))) metadata.set(key, value);
      try {
        const iterator = call.next(call.request, { ...rest, metadata });
        const step = await iterator.next();
        return step.value as Response;
      } catch (error) {
        throw fromClientError(error);
      }
    });
  }
  for (const [key, value] of Object.entries(injectContext({}))) metadata.set(key, value);
  try {
    return yield* call.next(call.request, { ...rest, metadata });
  } catch (error) {
    throw fromClientError(error);
  }
}

/** Turns a gRPC failure back into the HangarError the service raised (see WireProblem). */
function fromClientError(error: unknown): unknown {
  if (!(error instanceof ClientError)) return error;
  try {
    const problem = JSON.parse(error.details) as WireProblem;
    if (problem && typeof problem.kind === 'string') {
      return new HangarError(problem.kind as ErrorKind, problem.message, problem.extensions, problem.errorType);
    }
  } catch {
    // not a Hangar problem: fall through
  }
  if (error.code === Status.UNAVAILABLE || error.code === Status.DEADLINE_EXCEEDED) {
    return new HangarError('unavailable', `a Hangar service is unavailable (${error.path})`, {}, 'service_unavailable');
  }
  return error;
}

const clientFactory = createClientFactory().use(hangarClientMiddleware);

/** The address each channel was made for: a client of it calls a server listening in this process directly. */
const channelAddresses = new WeakMap<Channel, string>();

export function createChannel(address: string): Channel {
  const channel = createGrpcChannel(address);
  channelAddresses.set(channel, address);
  return channel;
}

export function createServiceClient<Service extends CompatServiceDefinition>(
  definition: Service,
  channel: Channel,
): Client<Service, CallerOptions> {
  const remote = clientFactory.create(definition, channel) as Client<Service, CallerOptions>;
  const address = channelAddresses.get(channel);
  if (address === undefined || !('methods' in definition)) return remote;
  return preferInProcess(definition as unknown as ServiceDefinitionLike, address, remote, hangarClientMiddleware);
}

export type { Channel };

import {
  ClientError,
  Metadata,
  ServerError,
  Status,
  type CallContext,
  type CallOptions,
  type ClientMiddleware,
  type MethodDescriptor,
  type ServerMiddleware,
} from 'nice-grpc-common';

/**
 * Calls between the modules of one process (all-in-one) without the loopback socket: a client of a
 * service whose server listens in this process calls its implementation directly, through the same
 * client and server middleware (caller metadata, spans, durations, problem details) and with every
 * message encoded and decoded as on the wire, so a service sees exactly what gRPC would deliver.
 * Loopback gRPC cost about 1.3 ms per unary call and a hop per streamed message (docs/decisions.md,
 * "In one process, modules call each other without the loopback socket"). The split shape runs the
 * same code over the network.
 *
 * A call is looked up when it is made: a server that stops listening is called over the network
 * again (and answers as a stopped server does). Client-streaming methods always go over the network.
 */

/** A ts-proto message type, as the generated service definitions carry them. */
interface MessageType {
  encode(message: unknown): { finish(): Uint8Array };
  decode(input: Uint8Array): unknown;
  fromPartial?(message: unknown): unknown;
}

interface MethodDefinition {
  name: string;
  requestType: MessageType;
  requestStream: boolean;
  responseType: MessageType;
  responseStream: boolean;
  options: Record<string, unknown>;
}

export interface ServiceDefinitionLike {
  fullName?: string;
  methods: Record<string, MethodDefinition>;
}

// A call of either kind (the middleware types tell unary and streaming apart by their generator types).
type ServerCall = Parameters<ServerMiddleware<any>>[0];
type ClientCall = Parameters<ClientMiddleware<any>>[0];

type Implementation = Record<string, (request: unknown, context: CallContext) => unknown>;

interface HostedMethod {
  descriptor: MethodDescriptor;
  /** The implementation as an async generator: a unary one returns its answer, a streaming one yields. */
  handler: (request: unknown, context: CallContext) => AsyncGenerator<unknown, unknown, undefined>;
}

/** Servers listening in this process, by the address their clients are given. */
const hosted = new Map<string, Map<string, HostedMethod>>();

/** Serves `services` to in-process clients of `address` until the returned function is called. */
export function hostInProcess(
  address: string,
  services: Array<{ definition: ServiceDefinitionLike; implementation: object }>,
  middleware: ServerMiddleware<any>,
): () => void {
  const methods = new Map<string, HostedMethod>();
  for (const { definition, implementation } of services) {
    if (!definition.fullName) continue;
    for (const [key, method] of Object.entries(definition.methods)) {
      if (method.requestStream) continue;
      const descriptor = descriptorOf(definition.fullName, method);
      const implement = (implementation as Implementation)[key].bind(implementation);
      const next = method.responseStream
        ? (request: unknown, context: CallContext) => implement(request, context) as AsyncGenerator<unknown, unknown, undefined>
        : async function* (request: unknown, context: CallContext) {
            return await implement(request, context);
          };
      methods.set(descriptor.path, {
        descriptor,
        handler: (request, context) =>
          middleware(
            { method: descriptor, requestStream: false, request, responseStream: method.responseStream, next } as ServerCall,
            context,
          ),
      });
    }
  }
  hosted.set(address, methods);
  return () => {
    if (hosted.get(address) === methods) hosted.delete(address);
  };
}

/**
 * `remote` with each unary and server-streaming method of `definition` called in this process
 * whenever a server for `address` listens here (see {@link hostInProcess}).
 */
export function preferInProcess<Client extends object>(
  definition: ServiceDefinitionLike,
  address: string,
  remote: Client,
  middleware: ClientMiddleware<any>,
): Client {
  if (!definition.fullName) return remote;
  const client: Record<string, unknown> = { ...(remote as Record<string, unknown>) };
  for (const [key, method] of Object.entries(definition.methods)) {
    if (method.requestStream) continue;
    const path = descriptorOf(definition.fullName, method).path;
    const overNetwork = (remote as Record<string, (request: unknown, options?: CallOptions) => unknown>)[key];
    const call = (target: HostedMethod, request: unknown, options: CallOptions = {}) => {
      const next = (message: unknown, callOptions: CallOptions) => callHosted(target, method, message, callOptions);
      return middleware(
        { method: target.descriptor, requestStream: false, request, responseStream: method.responseStream, next } as ClientCall,
        options,
      ) as AsyncGenerator<unknown, unknown, undefined>;
    };
    client[key] = method.responseStream
      ? (request: unknown, options?: CallOptions) => {
          const target = hosted.get(address)?.get(path);
          return target ? call(target, request, options) : overNetwork(request, options);
        }
      : async (request: unknown, options?: CallOptions) => {
          const target = hosted.get(address)?.get(path);
          if (!target) return overNetwork(request, options);
          const iterator = call(target, request, options);
          for (let step = await iterator.next(); ; step = await iterator.next()) if (step.done) return step.value;
        };
  }
  return client as Client;
}

/** How many answers a server-streaming call runs ahead of its client: what gRPC's flow-control window would hold. */
const RUN_AHEAD = 64;

/**
 * One call of a hosted method, as the network would carry it: the request and every answer pass
 * through their encodings; the server's errors arrive as ClientErrors (a non-gRPC error as
 * UNKNOWN, as nice-grpc's server sends it). The server runs on by itself, up to RUN_AHEAD answers
 * ahead of the client, and to its end if the client never reads again (its spans end, its finally
 * blocks run). A client that aborts or stops reading cancels the server's signal and gets an
 * AbortError at once, whatever the server is doing; the server's generator is closed after.
 */
async function* callHosted(
  target: HostedMethod,
  method: MethodDefinition,
  request: unknown,
  options: CallOptions,
): AsyncGenerator<unknown, unknown, undefined> {
  const clientSignal = options.signal;
  if (clientSignal?.aborted) throw abortError();
  const cancel = new AbortController();
  const onAbort = () => cancel.abort();
  clientSignal?.addEventListener('abort', onAbort, { once: true });
  const context: CallContext = {
    metadata: Metadata(options.metadata),
    peer: 'in-process',
    header: Metadata(),
    sendHeader() {},
    trailer: Metadata(),
    signal: cancel.signal,
  };
  const answers: unknown[] = [];
  let end: { failed: false; value: unknown } | { failed: true; error: unknown } | undefined;
  let answered: (() => void) | undefined;
  let roomMade: (() => void) | undefined;
  const wakeClient = () => {
    answered?.();
    answered = undefined;
  };
  const makeRoom = () => {
    roomMade?.();
    roomMade = undefined;
  };
  cancel.signal.addEventListener('abort', makeRoom, { once: true });

  void (async () => {
    let iterator: AsyncGenerator<unknown, unknown, undefined> | undefined;
    try {
      iterator = target.handler(copy(method.requestType, request), context);
      for (;;) {
        if (answers.length >= RUN_AHEAD && !cancel.signal.aborted) await new Promise<void>((resolve) => (roomMade = resolve));
        if (cancel.signal.aborted) {
          await iterator.return(undefined);
          return;
        }
        const step = await iterator.next();
        if (step.done) {
          end = { failed: false, value: method.responseStream ? undefined : copy(method.responseType, step.value) };
          return;
        }
        answers.push(copy(method.responseType, step.value));
        wakeClient();
      }
    } catch (error) {
      end = { failed: true, error };
      // An answer the client could not take (too large) cancels the call, as the network does.
      if (error instanceof ServerError && error.code === Status.RESOURCE_EXHAUSTED && iterator) {
        cancel.abort();
        void iterator.return(undefined).catch(() => undefined);
      }
    } finally {
      wakeClient();
    }
  })().catch(() => undefined);

  let completed = false;
  try {
    for (;;) {
      if (answers.length) {
        const answer = answers.shift();
        makeRoom();
        yield answer;
        continue;
      }
      if (end) {
        completed = true;
        if (end.failed) throw asClientError(target.descriptor.path, end.error);
        return end.value;
      }
      const answer = new Promise<void>((resolve) => (answered = resolve));
      await (clientSignal ? untilAborted(answer, clientSignal) : answer);
    }
  } catch (error) {
    if (!completed && clientSignal?.aborted) throw abortError();
    throw error;
  } finally {
    clientSignal?.removeEventListener('abort', onAbort);
    if (!completed) cancel.abort();
  }
}

function untilAborted<T>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function asClientError(path: string, error: unknown): ClientError {
  if (error instanceof ServerError) return new ClientError(path, error.code, error.details);
  return new ClientError(path, Status.UNKNOWN, 'Unknown server error occurred');
}

/** grpc-js's default `grpc.max_receive_message_length`, which Hangar's servers and clients keep. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * A message as it arrives over the wire: completed from partial as nice-grpc sends it, encoded and
 * decoded; one larger than a receiver takes is refused as grpc-js refuses it.
 */
function copy(type: MessageType, message: unknown): unknown {
  const bytes = type.encode(type.fromPartial ? type.fromPartial(message) : message).finish();
  if (bytes.length > MAX_MESSAGE_BYTES)
    throw new ServerError(Status.RESOURCE_EXHAUSTED, `Received message larger than max (${bytes.length} vs ${MAX_MESSAGE_BYTES})`);
  return type.decode(bytes);
}

const abortError = () => Object.assign(new Error('The operation has been aborted'), { name: 'AbortError' });

function descriptorOf(fullName: string, method: MethodDefinition): MethodDescriptor {
  return {
    path: `/${fullName}/${method.name}`,
    requestStream: method.requestStream,
    responseStream: method.responseStream,
    options: method.options,
  };
}

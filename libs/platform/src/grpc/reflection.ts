import { EventEmitter } from 'node:events';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadPackageDefinition, type ServiceDefinition, type UntypedHandleCall } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import type { Server } from 'nice-grpc';
import { runtimeFile } from '../runtime-files.js';

const PROTO_ROOT = runtimeFile('proto/');
const HANGAR_PROTOS = 'hangar/v1';
const REFLECTION_VERSIONS = ['v1', 'v1alpha'] as const;
/** How @grpc/reflection loads these files itself: its handlers read the request's oneof by name. */
const REFLECTION_LOADING = { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true };

type BidiHandler = (stream: EventEmitter) => void;

let hangarPackage: PackageDefinition | undefined;
let reflectionServices: ServiceDefinition[] | undefined;

/** Every file of proto/hangar/v1, loaded once per process, at the first reflection request. */
function hangarProtos(): PackageDefinition {
  hangarPackage ??= loadSync(
    readdirSync(`${PROTO_ROOT}${HANGAR_PROTOS}`)
      .filter((file) => file.endsWith('.proto'))
      .map((file) => `${HANGAR_PROTOS}/${file}`),
    { includeDirs: [PROTO_ROOT] },
  );
  return hangarPackage;
}

/** grpc.reflection's own service definitions (two small files), from the protos @grpc/reflection ships. */
function reflectionDefinitions(): ServiceDefinition[] {
  const require = createRequire(import.meta.url);
  reflectionServices ??= REFLECTION_VERSIONS.map((version) => {
    const proto = require.resolve(`@grpc/reflection/build/proto/grpc/reflection/${version}/reflection.proto`);
    const loaded = loadPackageDefinition(loadSync(proto, REFLECTION_LOADING)) as any;
    return loaded.grpc.reflection[version].ServerReflection.service as ServiceDefinition;
  });
  return reflectionServices;
}

/**
 * grpc.reflection v1 and v1alpha on a nice-grpc server, listing `services` (fully qualified names)
 * so grpcurl or Postman can describe and call them without the .proto files.
 *
 * @grpc/reflection indexes every proto when built (100–400 ms on this machine, for each server), so
 * it is built at the first reflection request, not at start. It registers grpc-js handlers, which a
 * nice-grpc server does not take: each bidi handler gets a stand-in stream, fed the requests one by
 * one; it writes its answers synchronously, so each request's answer is there once it is fed.
 */
export function addReflection(server: Server<any>, services: string[]): void {
  let handlers: Map<string, BidiHandler> | undefined;
  const handlerAt = (path: string) => {
    if (!handlers) {
      const built = new Map<string, BidiHandler>();
      new ReflectionService(hangarProtos(), { services }).addToServer({
        addService(definition: ServiceDefinition, implementation: Record<string, UntypedHandleCall>) {
          for (const [method, handle] of Object.entries(implementation)) built.set(definition[method].path, handle as BidiHandler);
        },
      });
      handlers = built;
    }
    return handlers.get(path)!;
  };
  for (const definition of reflectionDefinitions()) {
    const implementation = Object.fromEntries(
      Object.entries(definition).map(([method, { path }]) => [method, answerEach(() => handlerAt(path))]),
    );
    server.add(definition, implementation as never);
  }
}

function answerEach(handler: () => BidiHandler) {
  return async function* (requests: AsyncIterable<unknown>) {
    const answers: unknown[] = [];
    const stream = Object.assign(new EventEmitter(), { write: (answer: unknown) => answers.push(answer), end: () => {} });
    handler()(stream);
    for await (const request of requests) {
      stream.emit('data', request);
      yield* answers.splice(0);
    }
    stream.emit('end');
  };
}

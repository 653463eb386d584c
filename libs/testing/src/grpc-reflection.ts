import { createRequire } from 'node:module';
import { credentials, loadPackageDefinition, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer, loadSync, type PackageDefinition } from '@grpc/proto-loader';

const REFLECTION_PROTO = createRequire(import.meta.url).resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');

interface ReflectionAnswer {
  listServicesResponse?: { service: Array<{ name: string }> };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

/**
 * What a reflection client (grpcurl, Postman) learns from a server: the services it lists and,
 * from the file descriptors it sends, a package definition to call them with, no .proto at hand.
 */
export async function reflectServer(address: string): Promise<{ services: string[]; definition: PackageDefinition }> {
  const reflection = loadPackageDefinition(loadSync(REFLECTION_PROTO)) as any;
  const client = new (reflection.grpc.reflection.v1.ServerReflection as ServiceClientConstructor)(address, credentials.createInsecure());
  const call = client.ServerReflectionInfo();
  try {
    const answers: AsyncIterator<ReflectionAnswer> = call[Symbol.asyncIterator]();
    const ask = async (request: Record<string, string>) => {
      call.write(request);
      const { value } = await answers.next();
      if (value.errorResponse) throw new Error(`reflection: ${value.errorResponse.errorMessage}`);
      return value;
    };
    const services = (await ask({ listServices: '*' })).listServicesResponse!.service.map((service: { name: string }) => service.name);
    const files = new Map<string, Buffer>();
    for (const service of services) {
      for (const file of (await ask({ fileContainingSymbol: service })).fileDescriptorResponse!.fileDescriptorProto) {
        files.set(file.toString('base64'), file);
      }
    }
    call.end();
    return { services, definition: loadFileDescriptorSetFromBuffer(fileDescriptorSet([...files.values()])) };
  } finally {
    call.cancel();
    client.close();
  }
}

/** A client for a service described only by reflection. */
export function reflectedClient(definition: PackageDefinition, service: string, address: string) {
  const Client = service.split('.').reduce<any>((node, part) => node[part], loadPackageDefinition(definition) as GrpcObject);
  return new (Client as ServiceClientConstructor)(address, credentials.createInsecure());
}

/** `FileDescriptorSet { repeated FileDescriptorProto file = 1; }`, written by hand from the files' bytes. */
function fileDescriptorSet(files: Buffer[]): Buffer {
  const varint = (value: number) => {
    const bytes = [];
    for (; value > 0x7f; value >>>= 7) bytes.push((value & 0x7f) | 0x80);
    bytes.push(value);
    return Buffer.from(bytes);
  };
  return Buffer.concat(files.flatMap((file) => [Buffer.from([0x0a]), varint(file.length), file]));
}

import { allInOneModules } from '@hangar/all-in-one';
import * as contracts from '@hangar/contracts';
import { SERVICE_NAMES, type ServiceName } from '@hangar/platform';
import { reflectedClient, reflectServer, startHangar, type HangarUnderTest } from '@hangar/testing';
import { Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** gRPC for people: every service answers server reflection, as grpcurl and Postman ask it. */

let hangar: HangarUnderTest;
const addressOf = (service: string) => hangar.addressOf(service as ServiceName);

/** Each Hangar service definition (ts-proto), by its fully qualified name, with its method names. */
type ServiceDefinition = { fullName: string; methods: Record<string, { name: string }> };
const hangarServices = new Map(
  (Object.values(contracts) as unknown[])
    .filter((value): value is ServiceDefinition => typeof (value as Partial<ServiceDefinition>)?.fullName === 'string')
    .filter((definition) => definition.fullName.startsWith('hangar.v1.'))
    .map((definition) => [
      definition.fullName,
      Object.values(definition.methods)
        .map((method) => method.name)
        .sort(),
    ]),
);

beforeAll(async () => {
  hangar = await startHangar({ modules: allInOneModules() });
});

afterAll(async () => {
  await hangar?.stop();
});

describe('gRPC server reflection', () => {
  it.each(SERVICE_NAMES)('%s lists its services and describes every method', async (service) => {
    const { services, definition } = await reflectServer(addressOf(service));
    expect(services).toContain(`hangar.v1.${service}Service`);
    for (const name of services) {
      const methods = Object.keys(definition[name] as object).sort();
      expect(methods, name).toEqual(hangarServices.get(name));
    }
  });

  it('gives a client enough to call a method with no .proto at hand', async () => {
    const address = addressOf('AgentRegistry');
    const { definition } = await reflectServer(address);
    const client = reflectedClient(definition, 'hangar.v1.AgentRegistryService', address);
    const metadata = new Metadata();
    metadata.set('x-hangar-tenant', 'default');
    metadata.set('x-hangar-actor', 'reflection-test');
    try {
      const answer = await new Promise<any>((resolve, reject) =>
        client.ListModels({}, metadata, (error: Error | null, response: unknown) => (error ? reject(error) : resolve(response))),
      );
      expect(answer.models.length).toBeGreaterThan(0);
    } finally {
      client.close();
    }
  });
});

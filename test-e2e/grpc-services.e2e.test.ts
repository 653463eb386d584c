import { allInOneModules } from '@hangar/all-in-one';
import { AgentRegistryServiceDefinition, definitionToProto, normalizeDefinition, SkillServiceDefinition } from '@hangar/contracts';
import { createServiceClient, HangarError, SERVICE_NAMES, type ServiceName } from '@hangar/platform';
import { startHangar, type HangarUnderTest } from '@hangar/testing';
import { ClientError, createChannel, createClient, Status, type Channel } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Each service's own surface: gRPC, called the way the gateway and other services call it. */

let hangar: HangarUnderTest;
const channels: Channel[] = [];
const channelTo = (service: ServiceName) => {
  const address = hangar.process.modules.running.get(service)!.address!;
  const channel = createChannel(address);
  channels.push(channel);
  return channel;
};
const acme = { caller: { tenantId: 'acme', actor: 'grpc-test' } };

beforeAll(async () => {
  hangar = await startHangar({ modules: allInOneModules() });
});

afterAll(async () => {
  channels.forEach((channel) => channel.close());
  await hangar?.stop();
});

describe('gRPC services', () => {
  it.each(SERVICE_NAMES)('%s answers the standard grpc.health.v1 check', async (service) => {
    const health = createClient(HealthDefinition, channelTo(service));
    expect(await health.check({ service: '' })).toEqual({ status: 1 });
  });

  it('refuses a call without the tenant metadata', async () => {
    const raw = createClient(AgentRegistryServiceDefinition, channelTo('AgentRegistry'));
    const error = await raw.listAgents({}).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).code).toBe(Status.UNAUTHENTICATED);
  });

  it('creates and reads an agent for the calling tenant only', async () => {
    const registry = createServiceClient(AgentRegistryServiceDefinition, channelTo('AgentRegistry'));
    const definition = normalizeDefinition({ name: 'grpc-made', model: { provider: 'demo', model: 'echo' } });
    const { agent } = await registry.createAgent({ definition: definitionToProto(definition) }, acme);
    expect(agent).toMatchObject({ version: 1, createdBy: 'grpc-test', definition: { name: 'grpc-made' } });
    expect((await registry.getAgent({ name: 'grpc-made' }, acme)).isEditable).toBe(true);
    const other = await registry
      .getAgent({ name: 'grpc-made' }, { caller: { tenantId: 'globex', actor: 'x' } })
      .catch((failure: unknown) => failure);
    expect(other).toBeInstanceOf(HangarError);
    expect(other).toMatchObject({ kind: 'notFound', errorType: 'not_found' });
  });

  it('applies the definition shape rules to gRPC callers too, with field paths', async () => {
    const registry = createServiceClient(AgentRegistryServiceDefinition, channelTo('AgentRegistry'));
    const bad = definitionToProto(normalizeDefinition({ name: 'fine', model: { provider: 'demo', model: 'echo' } }));
    const error = await registry.createAgent({ definition: { ...bad, name: 'not fine!' } }, acme).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ kind: 'validation', extensions: { errors: [expect.objectContaining({ path: 'name' })] } });
    const missing = await registry.createAgent({}, acme).catch((failure: unknown) => failure);
    expect(missing).toMatchObject({ kind: 'validation' });
  });

  it('answers which skills exist for a tenant', async () => {
    const skills = createServiceClient(SkillServiceDefinition, channelTo('Skill'));
    expect(await skills.findSkills({ names: ['pdf-reports', 'pdf-reports'] }, acme)).toEqual({ existing: [] });
  });
});

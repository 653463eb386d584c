import { allInOneModules } from '@hangar/all-in-one';
import {
  AgentRegistryServiceDefinition,
  definitionToProto,
  GovernanceServiceDefinition,
  normalizeDefinition,
  SkillServiceDefinition,
} from '@hangar/contracts';
import { createServiceClient, HangarError, SERVICE_NAMES, type ServiceName } from '@hangar/platform';
import { startHangar, type HangarUnderTest } from '@hangar/testing';
import { ClientError, createChannel, createClient, Status, type Channel } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Each service's own surface: gRPC, called the way the gateway and other services call it. */

let hangar: HangarUnderTest;
const channels: Channel[] = [];
const channelTo = (service: ServiceName) => {
  const address = hangar.addressOf(service);
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

  it('Governance records audit entries for the calling tenant and actor, and refuses malformed ones', async () => {
    const governance = createServiceClient(GovernanceServiceDefinition, channelTo('Governance'));
    const alice = { caller: { tenantId: 'acme', actor: 'alice', userId: 'alice' } };
    const { entry } = await governance.recordAudit(
      { action: 'agent.updated', resourceType: 'agent', resourceId: 'helper', details: { version: 2 } },
      alice,
    );
    expect(entry).toMatchObject({ tenantId: 'acme', actor: 'alice', userId: 'alice', action: 'agent.updated', details: { version: 2 } });
    const bad = await governance
      .recordAudit({ action: 'Not An Action', resourceType: '', resourceId: 'x' }, alice)
      .catch((failure: unknown) => failure);
    expect(bad).toMatchObject({
      kind: 'validation',
      extensions: { errors: [expect.objectContaining({ path: 'action' }), expect.objectContaining({ path: 'resourceType' })] },
    });
    expect((await governance.listAudit({ skip: 0, take: 10 }, alice)).entries.map((found) => found.id)).toEqual([entry!.id]);
    expect((await governance.listAudit({ skip: 0, take: 10 }, { caller: { tenantId: 'globex', actor: 'x' } })).entries).toEqual([]);
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

import { AGENT_CHANGES_CHANNEL, QUOTA_CHANGES_CHANNEL, type AgentDefinition } from '@hangar/contracts';
import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger, HangarError, type Caller } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { createCachedAgents } from '../src/clients/cached-agents.js';
import type { AgentLoader } from '../src/clients/ports.js';
import { createQuotaCoverage, type GovernanceAdmission } from '../src/clients/quota-coverage.js';

/** What a run asks other services before its model call, kept until a change is announced (agents, quota coverage). */

const logger = createLogger({ name: 'test', level: 'silent' });
const acme: Caller = { tenantId: 'acme', actor: 'test' } as Caller;
const globex: Caller = { tenantId: 'globex', actor: 'test' } as Caller;
const definition = (name: string, instructions: string) => ({ name, instructions }) as unknown as AgentDefinition;

describe('cached agents', () => {
  function setUp(versions: Map<string, number | null>) {
    const pubsub = createInProcessPubSub();
    const loads: string[] = [];
    let registryDown = false;
    const agents = strictFake<AgentLoader>('agents', {
      async load(caller, name) {
        loads.push(`${caller.tenantId}/${name}`);
        if (registryDown) throw new HangarError('unavailable', 'registry down');
        if (!versions.has(name)) throw new HangarError('notFound', `agent "${name}" not found`);
        return { definition: definition(name, `v${versions.get(name)}`), version: versions.get(name)! };
      },
    });
    const cached = createCachedAgents({ agents, pubsub, logger });
    const announce = (tenantId: string, name: string) =>
      pubsub.publish(AGENT_CHANGES_CHANNEL, JSON.stringify({ id: `${tenantId}/${name}` }));
    return { cached, loads, announce, setRegistryDown: (down: boolean) => (registryDown = down) };
  }

  it('loads a stored agent once per tenant, and again once its change is announced', async () => {
    const versions = new Map<string, number | null>([['helper', 1]]);
    const { cached, loads, announce } = setUp(versions);
    await cached.start();
    expect((await cached.agents.load(acme, 'helper')).version).toBe(1);
    expect((await cached.agents.load(acme, 'helper')).version).toBe(1);
    await cached.agents.load(globex, 'helper');
    versions.set('helper', 2);
    await announce('globex', 'helper');
    expect((await cached.agents.load(acme, 'helper')).version).toBe(1);
    await announce('acme', 'helper');
    expect((await cached.agents.load(acme, 'helper')).version).toBe(2);
    expect(loads).toEqual(['acme/helper', 'globex/helper', 'acme/helper']);
    await cached.stop();
  });

  it('keeps neither a code agent (no version: a factory builds per caller) nor an unknown name', async () => {
    const { cached, loads } = setUp(new Map([['factory', null]]));
    await cached.agents.load(acme, 'factory');
    await cached.agents.load(acme, 'factory');
    await expect(cached.agents.load(acme, 'missing')).rejects.toMatchObject({ status: 404 });
    await expect(cached.agents.load(acme, 'missing')).rejects.toMatchObject({ status: 404 });
    expect(loads).toEqual(['acme/factory', 'acme/factory', 'acme/missing', 'acme/missing']);
  });

  it('stands by the last definition known while the registry cannot answer', async () => {
    const { cached, announce, setRegistryDown } = setUp(new Map([['helper', 3]]));
    await cached.start();
    await cached.agents.load(acme, 'helper');
    await announce('acme', 'helper');
    setRegistryDown(true);
    expect((await cached.agents.load(acme, 'helper')).version).toBe(3);
    await expect(cached.agents.load(globex, 'helper')).rejects.toMatchObject({ status: 503 });
    await cached.stop();
  });

  it('believes a registry that answers an announced agent is gone', async () => {
    const versions = new Map<string, number | null>([['helper', 1]]);
    const { cached, announce } = setUp(versions);
    await cached.start();
    await cached.agents.load(acme, 'helper');
    versions.delete('helper');
    await announce('acme', 'helper');
    await expect(cached.agents.load(acme, 'helper')).rejects.toMatchObject({ status: 404 });
    await cached.stop();
  });
});

describe('quota coverage', () => {
  function setUp(covered: Set<string>) {
    const pubsub = createInProcessPubSub();
    const asked: string[] = [];
    const admitRun: GovernanceAdmission = async (caller, agentName) => {
      asked.push(`${caller.tenantId}/${agentName}`);
      return { governed: covered.has(agentName) };
    };
    const coverage = createQuotaCoverage({ admitRun, pubsub, logger });
    const announce = (tenantId: string) => pubsub.publish(QUOTA_CHANGES_CHANNEL, JSON.stringify({ id: tenantId }));
    return { coverage, asked, announce };
  }

  it('stops asking governance about an agent no rule covers, until the tenant’s rules change', async () => {
    const covered = new Set<string>();
    const { coverage, asked, announce } = setUp(covered);
    await coverage.start();
    await coverage.admitRun(acme, 'free');
    await coverage.admitRun(acme, 'free');
    await coverage.admitRun(globex, 'free');
    covered.add('free');
    await announce('globex');
    await coverage.admitRun(acme, 'free');
    await announce('acme');
    await coverage.admitRun(acme, 'free');
    await coverage.admitRun(acme, 'free');
    expect(asked).toEqual(['acme/free', 'globex/free', 'acme/free', 'acme/free']);
    await coverage.stop();
  });

  it('asks about a covered agent every time and hands on the used-up rule', async () => {
    const exceeded = { name: 'daily', metric: 'Runs', period: 'Day', limit: 1, used: 1, resetsAt: undefined };
    const pubsub = createInProcessPubSub();
    let asks = 0;
    const coverage = createQuotaCoverage({
      admitRun: async () => ((asks += 1), { governed: true, exceeded }),
      pubsub,
      logger,
    });
    expect(await coverage.admitRun(acme, 'metered')).toEqual(exceeded);
    expect(await coverage.admitRun(acme, 'metered')).toEqual(exceeded);
    expect(asks).toBe(2);
  });

  it('does not trust an answer given before a rule change it learnt of meanwhile', async () => {
    const pubsub = createInProcessPubSub();
    let release!: () => void;
    let asks = 0;
    const coverage = createQuotaCoverage({
      admitRun: async () => {
        asks += 1;
        if (asks === 1) await new Promise<void>((resolve) => (release = resolve));
        return { governed: false };
      },
      pubsub,
      logger,
    });
    await coverage.start();
    const first = coverage.admitRun(acme, 'agent');
    await new Promise((resolve) => setImmediate(resolve));
    await pubsub.publish(QUOTA_CHANGES_CHANNEL, JSON.stringify({ id: 'acme' }));
    release();
    await first;
    await coverage.admitRun(acme, 'agent');
    expect(asks).toBe(2);
    await coverage.stop();
  });
});

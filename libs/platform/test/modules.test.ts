import { startOrder, type HangarModule, type ModuleName, type ServiceName } from '@hangar/platform';
import { describe, expect, it } from 'vitest';

const module = (name: ModuleName, dependsOn: ServiceName[] = []): HangarModule => ({
  name,
  dependsOn,
  start: async () => ({ stop: async () => {} }),
});

describe('module graph', () => {
  it('starts dependencies first whatever the registration order', () => {
    const order = startOrder([module('Gateway', ['AgentRegistry', 'Skill']), module('AgentRegistry', ['Skill']), module('Skill')]);
    expect(order.map((entry) => entry.name)).toEqual(['Skill', 'AgentRegistry', 'Gateway']);
  });

  it('treats a dependency outside the set as remote', () => {
    expect(startOrder([module('AgentRegistry', ['Skill'])]).map((entry) => entry.name)).toEqual(['AgentRegistry']);
  });

  it('refuses a cycle, naming it', () => {
    expect(() => startOrder([module('Session', ['Attachment']), module('Attachment', ['Session'])])).toThrow(
      'module dependency cycle: Session -> Attachment -> Session',
    );
  });
});

import { runMain } from '@hangar/platform';
import { agentRegistryModule } from './agent-registry.module.js';

await runMain('agent-registry', () => [agentRegistryModule]);

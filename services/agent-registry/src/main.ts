// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { agentRegistryModule } from './agent-registry.module.js';

await runMain('agent-registry', () => [agentRegistryModule]);

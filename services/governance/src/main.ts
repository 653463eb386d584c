// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { governanceModule } from './governance.module.js';

await runMain('governance', () => [governanceModule]);

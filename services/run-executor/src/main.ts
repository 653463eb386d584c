// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { runExecutorModule } from './run-executor.module.js';

await runMain('run-executor', () => [runExecutorModule]);

// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { sessionModule } from './session.module.js';

await runMain('session', () => [sessionModule]);

// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { evaluationModule } from './evaluation.module.js';

await runMain('evaluation', () => [evaluationModule]);

// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { knowledgeModule } from './knowledge.module.js';

await runMain('knowledge', () => [knowledgeModule]);

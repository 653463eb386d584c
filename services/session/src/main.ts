import { runMain } from '@hangar/platform';
import { sessionModule } from './session.module.js';

await runMain('session', () => [sessionModule]);

import { runMain } from '@hangar/platform';
import { runExecutorModule } from './run-executor.module.js';

await runMain('run-executor', () => [runExecutorModule]);

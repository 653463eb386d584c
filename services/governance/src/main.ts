import { runMain } from '@hangar/platform';
import { governanceModule } from './governance.module.js';

await runMain('governance', () => [governanceModule]);

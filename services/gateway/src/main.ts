import { runMain } from '@hangar/platform';
import { gatewayModule } from './gateway.module.js';

await runMain('gateway', () => [gatewayModule]);

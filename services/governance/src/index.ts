export { governanceModule } from './governance.module.js';

export { sessionModule } from './session.module.js';

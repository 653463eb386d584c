export { runExecutorModule } from './run-executor.module.js';

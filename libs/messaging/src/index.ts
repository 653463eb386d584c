export * from './ports.js';
export { createInProcessEventLog, createInProcessPubSub } from './in-process.js';

export * from './postgres.js';
export * from './engines.js';
export * from './hangar.js';
export * from './jwt.js';
export * from './ports.js';
export * from './distributed.js';
export * from './mock-openai.js';
export * from './all-in-one-process.js';

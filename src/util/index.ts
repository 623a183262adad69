// Small shared pieces with no home of their own.
export { Mulberry32 } from './random.js';
export { spawnModuleWorker } from './worker.js';

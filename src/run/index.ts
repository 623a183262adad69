// Running a workload: the orchestrator and its event bus.
export { executeRun, type RunResult, type RunStatus } from './run.js';
export { RunBus } from './bus.js';
export { parseShard, shardAgents, type Shard } from './shard.js';
export { planPhases, plannedRequests, laneCount } from './phase.js';
export { planReplay, type ReplayPlan } from './replay.js';

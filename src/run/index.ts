// Running a workload: the orchestrator and its event bus.
export { executeRun, type RunOptions, type RunResult, type RunStatus } from './run.js';
export { RunBus } from './bus.js';
export { parseShard, shardAgents, type Shard } from './shard.js';
export { planPhases, plannedRequests, type PhasePlan } from './phase.js';
export { planReplay, replayLanes, type ReplayPlan, type ReplayConversationPlan } from './replay.js';

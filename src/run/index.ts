// Running a workload: the orchestrator and its event bus.
export { executeRun, type RunOptions, type RunResult, type RunStatus } from './run.js';
export { RunBus } from './bus.js';
export { parseShard, shardAgents, type Shard } from './shard.js';
export { planPhases, plannedRequests, laneCount, type PhasePlan } from './phase.js';
export { planReplay, replayLanes, type ReplayPlan, type ReplayConversationPlan } from './replay.js';
export { loadSchedule, arrivalTimes, levelAt, stageIndexAt, ArrivalScheduler, type LoadSchedule, type Stage, type ArrivalStart, type ArrivalTally } from './arrival.js';

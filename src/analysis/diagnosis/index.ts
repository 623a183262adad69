// The diagnosis: where a run's hangs and errors come from (proxy, engine, an overloaded engine, the client,
// a starved host, the network), episode by episode, with the evidence for and against each call.
export { diagnose, score, MAX_EPISODES } from './judge.js';
export { DiagnosisCollector, BUFFERED_MIN_TOKENS } from './collector.js';
export { CLIENT_LATE_MS, type DiagnosisInput } from './context.js';
export { answererOf, type HangSpan, type ErrorSpan, type CanaryPoint, type ScrapePoint, type ClientWindow, type FlowTrack, type RequestActivity, type Answerer } from './inputs.js';
export { fisherGreater, wilson } from './stats.js';
export type { Vote, Candidate } from './votes.js';

// The diagnosis: where a run's hangs and errors come from (proxy, engine, an overloaded engine, the client,
// a starved host, the network), episode by episode, with the evidence for and against each call.
export { diagnose } from './judge.js';
export { DiagnosisCollector } from './collector.js';
export { type DiagnosisInput } from './context.js';
export { answererOf, type HangSpan, type ErrorSpan, type CanaryPoint, type ScrapePoint, type ClientWindow, type FlowTrack, type RequestActivity } from './inputs.js';
export { bitsText, fisherGreater, wilson } from './stats.js';
export { describePathTimeout, findPathTimeout } from './path-timeout.js';
export { withEngineTraceFacts, type EngineTraceEnd, type HungTrace } from './engine-trace.js';

// Traces of a real harness: the recording proxy (`roundload record`), reading a trace back, its statistics
// (`roundload trace show`) and imports from other formats (`roundload trace import`).
export { startRecorder, type RecorderOptions, type RecorderHandle, type RecorderTally } from './recorder.js';
export { readTrace, type Trace } from './read.js';
export { Hasher, requestShape, messageShape } from './shape.js';
export { ConversationInference, type Assignment, type RequestSeen } from './conversations.js';
export { TRACE_FORMAT, TRACE_VERSION } from './types.js';
export type { TraceHeader, TraceRequest, TraceRequestShape, TraceResponse, TraceMessage, TraceTools, TraceClose, TraceContent, TraceLine, TraceSource } from './types.js';
export { traceStats, formatTraceStats, distribution, type TraceStats, type TraceRoundStats, type Distribution } from './show.js';
export { importTrace, type ImportOptions, type ImportResult } from './import.js';

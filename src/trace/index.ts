// Traces of a real harness: the recording proxy (`roundload record`), reading a trace back, its statistics
// (`roundload trace show`) and imports from other formats (`roundload trace import`).
export { startRecorder } from './recorder.js';
export { readTrace, type Trace } from './read.js';
export { Hasher, requestShape } from './shape.js';
export { ConversationInference } from './conversations.js';
export type { TraceRequest } from './types.js';
export { traceStats, formatTraceStats } from './show.js';
export { importTrace } from './import.js';
export { replayedConversations, recordedFigures } from './replayed.js';

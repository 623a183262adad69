// Streamed chat completions: SSE bytes → typed StreamEvents (ChatStreamParser) → one message (MessageAssembler).
// Pure code, no I/O; the only folder that imports eventsource-parser.

export { ChatStreamParser } from './parser.js';
export { MessageAssembler } from './assembler.js';
export { parseErrorBody } from './chunk.js';
export type { AssembledMessage, AssembledToolCall, StreamEvent } from './types.js';

// Agent workers: conversations that grow round by round, and the request of each round.
export { runAgent } from './loop.js';
export { runReplayAgent, type ReplayRound } from './replay.js';
export { ReplayBodies, syntheticText, syntheticTools, type ShapeRequest } from './replay-body.js';
export { ReplayCalibration, ConversationSizer, TEMPLATE_TOKENS_PER_MESSAGE, type ServerTokenizer } from './replay-size.js';
export { sendRound, type RoundTarget } from './round.js';
export { RoundLifecycle, outOfOrderCallbacks } from './round-state.js';
export { Conversation, resolveTools, systemPrompt, TRUNCATION_NOTE, NAMELESS_CALL_RESULT } from './conversation.js';
export { toolsPayload } from './tools.js';
export { ERROR_CLASSES, WARNING_CLASSES, classifyTransportError, throughProxy } from './classify.js';
export { shouldRetry, serverAway, backoffMs, retryAfterMs } from './retry.js';

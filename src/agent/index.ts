// Agent workers: conversations that grow round by round, and the request of each round.
export { runAgent, type AgentSpec } from './loop.js';
export { runReplayAgent, type ReplayAgentSpec, type ReplayRound } from './replay.js';
export { ReplayBodies, syntheticText, syntheticTools, type ReplayContents, type ShapeRequest, type ShapeMessage, type AnswerUse } from './replay-body.js';
export { sendRound, type RoundTarget, type RoundRequest, type RoundOutcome, type EncodedBody } from './round.js';
export { RoundLifecycle, outOfOrderCallbacks, type RoundState } from './round-state.js';
export { Conversation, resolveTools, systemPrompt, TRUNCATION_NOTE, NAMELESS_CALL_RESULT } from './conversation.js';
export { DEFAULT_TOOLS } from './tools.js';
export { ERROR_CLASSES, WARNING_CLASSES, TOOL_MARKUP, classifyTransportError, throughProxy, type ErrorClass, type WarningClass } from './classify.js';
export { Rng, hash32 } from './rng.js';
export { shouldRetry, serverAway, backoffMs, BACKOFF_FIRST_MS, BACKOFF_MAX_MS, type RetryPolicy } from './retry.js';

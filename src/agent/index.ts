// Agent workers: conversations that grow round by round, and the request of each round.
export { runAgent, type AgentSpec } from './loop.js';
export { sendRound, type RoundTarget, type RoundRequest, type RoundOutcome } from './round.js';
export { Conversation, resolveTools, systemPrompt } from './conversation.js';
export { DEFAULT_TOOLS } from './tools.js';
export { ERROR_CLASSES, classifyTransportError, type ErrorClass } from './classify.js';
export { Rng, hash32 } from './rng.js';
export { shouldRetry, type RetryPolicy } from './retry.js';

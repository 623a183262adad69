// Small shared pieces with no home of their own.
export { Rng } from './random.js';
export { longTimeout, type LongTimer } from './timers.js';
export { clip, oneLine, printable } from './text.js';
export { shellCommand, shellQuote } from './shell.js';
export { SecretScrubber, guardTerminal, redactUrlCredentials, urlSecrets } from './secrets.js';
export { spawnModuleProcess, spawnModuleWorker } from './worker.js';
export { round1, round3, fixedDigits, isObject } from './number.js';
export { fsReason, osCode } from './fs-reason.js';
export { hostHeaderName, isLoopbackHost, isLoopbackUrl } from './loopback.js';
export { parseDurationMs } from './duration.js';
export { traceLink } from './trace-url.js';
export { ProtoWriter, VARINT, FIXED64, BYTES } from './protobuf-writer.js';
export { nextTraceIds, traceparent, parseTraceparent, TRACEPARENT_HEADER, type TraceIds } from './trace-context.js';
export { partitionPoint } from './search.js';

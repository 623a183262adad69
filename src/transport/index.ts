// Network paths: dispatcher lanes per agent, streaming sends, bounded GETs, connection tracking.
export { Transport, type TransportOptions, type TlsOptions, type Lane } from './dispatcher.js';
export { tlsConnectOptions } from './paths.js';
export { sendStream, type StreamRequest, type StreamCallbacks, type Abort } from './send.js';
export { boundedGet, GetTimeoutError, type GetResult } from './get.js';
export { ConnectionTracker, REQUEST_ID_HEADER } from './tracker.js';

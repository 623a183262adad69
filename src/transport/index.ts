// Network paths: dispatcher lanes per agent, streaming sends, bounded GETs, connection tracking.
export { Transport, type TlsOptions, type Lane } from './dispatcher.js';
export { sendStream, type Abort } from './send.js';
export { boundedGet, GetTimeoutError } from './get.js';
export { ConnectionTracker, REQUEST_ID_HEADER } from './tracker.js';

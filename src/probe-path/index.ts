// Measuring a network path before a run (`roundload probe-path`): idle keep-alive timeout, read timeout of a
// held response, stream buffering, largest body accepted.
export { probePath, CHECKS, type Check, type ProbeReport } from './probe.js';
export { openPathClient } from './exchange.js';
export { formatProbe } from './format.js';

// The built-in TLS hop's public face: a TLS-terminating reverse proxy for streaming, with faults, that the run
// starts in front of the target (`target.via: {kind: hop}`) and `roundload hop` runs standalone.
export { startHop, type HopOptions, type HopHandle, type HopStats, type HopFaultFired } from './server.js';
export { parseFaultSpec, formatFault, type HopFaultKind } from './faults.js';
export { makeCertificates, type HopCertificates } from './cert.js';

// The built-in hop's public face: a TLS-terminating (or plain) reverse proxy for streaming, with faults and an
// observer per exchange, that the run starts in front of the target (`target.via: {kind: hop}`), `roundload hop`
// runs standalone and `roundload record` builds its recording proxy on.
export { startHop, type HopOptions, type HopHandle, type HopStats, type HopFaultFired } from './server.js';
export type { ExchangeStart, ExchangeTap, ExchangeEnd, ConnectionClosed } from './tap.js';
export { parseFaultSpec, formatFault, type HopFaultKind } from './faults.js';
export { makeCertificates, type HopCertificates } from './cert.js';

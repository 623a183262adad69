// The hop's public face: a TLS-terminating (or plain) reverse proxy for streaming, with faults and an
// observer per exchange, that the run starts in front of the target (`target.via: {kind: hop}`), `roundload hop`
// runs standalone and `roundload record` builds its recording proxy on.
export { startHop, type HopHandle } from './server.js';
export type { HopFaultFired } from './fault.js';
export type { ExchangeStart, ExchangeTap, ExchangeEnd } from './tap.js';
export { parseFaultSpec, formatFault } from './faults.js';
export { makeCertificates } from './cert.js';

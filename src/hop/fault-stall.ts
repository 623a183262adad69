// stall: from request `after_requests + 1` on a connection, requests are read and never forwarded nor answered.
import type { HopFault } from '../config/index.js';
import { FORWARD, TAKEN, type HopFaultModule } from './fault.js';

export function stallFault(f: Extract<HopFault, { kind: 'stall' }>): HopFaultModule {
  return {
    kind: 'stall',
    onRequest: ({ conn, nth, req, tap }, tools) => {
      if (nth <= f.after_requests) return FORWARD;
      tools.fire('stall', conn, nth, `request ${nth} on a connection that carried ${f.after_requests}: read, never forwarded nor answered`);
      tap.end({ kind: 'fault', fault: 'stall' });
      req.resume();
      return TAKEN;
    },
  };
}

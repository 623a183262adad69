// stall: from request `after_requests + 1` on a connection, requests (a seeded `ratio` of them, chosen by their
// number on the hop) are read and never forwarded nor answered.
import type { HopFault } from '../config/index.js';
import { FORWARD, TAKEN, type HopFaultModule } from './fault.js';
import { seededUnit } from './faults.js';

export function stallFault(f: Extract<HopFault, { kind: 'stall' }>): HopFaultModule {
  return {
    kind: 'stall',
    onRequest: ({ conn, nth, seq, req, tap }, tools) => {
      if (nth <= f.after_requests) return FORWARD;
      // No ratio (or 1) stalls every one, as before the share existed; below it, a seeded choice.
      const ratio = f.ratio ?? 1;
      const seed = f.seed ?? 1;
      if (ratio < 1 && seededUnit(seed, seq) >= ratio) return FORWARD;
      const share = ratio < 1 ? ` (ratio ${ratio}, seed ${seed})` : '';
      tools.fire('stall', conn, nth, `request ${nth} on a connection that carried ${f.after_requests}: read, never forwarded nor answered${share}`);
      tap.end({ kind: 'fault', fault: 'stall' });
      req.resume();
      return TAKEN;
    },
  };
}

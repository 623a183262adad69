// reset: a seeded share (`ratio`) of connections is reset (RST) at its first request.
import type { HopFault } from '../config/index.js';
import { FORWARD, TAKEN, type HopFaultModule } from './fault.js';
import { seededUnit } from './faults.js';

export function resetFault(f: Extract<HopFault, { kind: 'reset' }>): HopFaultModule {
  return {
    kind: 'reset',
    onRequest: ({ conn, nth, tap }, tools) => {
      if (nth !== 1 || seededUnit(f.seed, conn.id) >= f.ratio) return FORWARD;
      tools.fire('reset', conn, nth, `connection ${conn.id} reset at its first request (ratio ${f.ratio}, seed ${f.seed})`);
      tap.end({ kind: 'fault', fault: 'reset' });
      tools.reset(conn);
      return TAKEN;
    },
  };
}

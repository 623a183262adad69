// The workload's hop faults as modules, in the order they act: a silent connection is answered by nothing
// before anything else; stall and reset take a request before latency delays it; a held (buffer) body is
// never cut.
import type { HopFault } from '../config/index.js';
import type { HopFaultModule } from './fault.js';
import { bufferFault } from './fault-buffer.js';
import { cutFault } from './fault-cut.js';
import { idleCloseFault } from './fault-idle-close.js';
import { latencyFault } from './fault-latency.js';
import { resetFault } from './fault-reset.js';
import { stallFault } from './fault-stall.js';

const ORDER: readonly HopFault['kind'][] = ['idle_close', 'stall', 'reset', 'latency', 'buffer', 'cut'];

function moduleOf(f: HopFault): HopFaultModule {
  switch (f.kind) {
    case 'stall':
      return stallFault(f);
    case 'reset':
      return resetFault(f);
    case 'latency':
      return latencyFault(f);
    case 'idle_close':
      return idleCloseFault(f);
    case 'cut':
      return cutFault(f);
    case 'buffer':
      return bufferFault();
  }
}

/** One module per kind (the first fault of a kind, as before), in acting order. */
export function faultModules(faults: readonly HopFault[]): HopFaultModule[] {
  return ORDER.flatMap((kind) => {
    const f = faults.find((x) => x.kind === kind);
    return f === undefined ? [] : [moduleOf(f)];
  });
}

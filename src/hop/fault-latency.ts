// latency: every request waits `ms` plus a seeded share of `jitter_ms` before it is forwarded.
import type { HopFault } from '../config/index.js';
import type { HopFaultModule } from './fault.js';
import { seededUnit } from './faults.js';

export function latencyFault(f: Extract<HopFault, { kind: 'latency' }>): HopFaultModule {
  return {
    kind: 'latency',
    onRequest: ({ seq }, tools) => {
      tools.count('latency');
      return { action: 'delay', delayMs: f.ms + f.jitter_ms * seededUnit(7, seq) };
    },
  };
}

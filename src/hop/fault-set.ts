// The workload's hop faults as modules, in the order they act: a silent connection is answered by nothing
// before anything else; stall and reset take a request before latency delays it; a held (buffer) body is
// never cut. HopFaults applies them at their three points and counts them.
import type { HopFault } from '../config/index.js';
import { FORWARD, type BodyFilter, type Conn, type FaultRequest, type FaultTools, type HopFaultFired, type HopFaultModule, type RequestVerdict } from './fault.js';
import { bufferFault } from './fault-buffer.js';
import { cutFault } from './fault-cut.js';
import { idleCloseFault } from './fault-idle-close.js';
import { latencyFault } from './fault-latency.js';
import { resetFault } from './fault-reset.js';
import { stallFault } from './fault-stall.js';

/** Every hop fault, in acting order, with what makes its module: a kind left out does not compile. */
const FAULT_MODULES: { [K in HopFault['kind']]: (f: Extract<HopFault, { kind: K }>) => HopFaultModule } = {
  idle_close: idleCloseFault,
  stall: stallFault,
  reset: resetFault,
  latency: latencyFault,
  buffer: () => bufferFault(),
  cut: cutFault,
};

/** The hop's fault kinds in the order they act. */
const HOP_FAULT_ORDER = Object.keys(FAULT_MODULES) as HopFault['kind'][];

function moduleOf<K extends HopFault['kind']>(f: Extract<HopFault, { kind: K }>): HopFaultModule {
  return (FAULT_MODULES[f.kind] as (f: Extract<HopFault, { kind: K }>) => HopFaultModule)(f);
}

/** One module per kind (the first fault of a kind, as before), in acting order. */
export function faultModules(faults: readonly HopFault[]): HopFaultModule[] {
  return HOP_FAULT_ORDER.flatMap((kind) => {
    const f = faults.find((x) => x.kind === kind);
    return f === undefined ? [] : [moduleOf(f)];
  });
}

/** What the faults tell the hop: each one acting (`onFault`), and whether the hop is closing. */
export interface HopFaultsHooks {
  onFault?: ((fired: HopFaultFired) => void) | undefined;
  isClosed: () => boolean;
}

/** The workload's faults acting on the hop at their three points, and how often each acted. */
export class HopFaults {
  readonly #modules: readonly HopFaultModule[];
  readonly #counts = Object.fromEntries(HOP_FAULT_ORDER.map((kind) => [kind, 0])) as Record<HopFault['kind'], number>;
  readonly #tools: FaultTools;

  constructor(faults: readonly HopFault[], hooks: HopFaultsHooks) {
    this.#modules = faultModules(faults);
    this.#tools = {
      fire: (fault, conn, request, detail) => {
        this.#counts[fault] += 1;
        hooks.onFault?.({ fault, connection: conn.id, request, detail });
      },
      count: (fault) => {
        this.#counts[fault] += 1;
      },
      reset: (conn) => {
        if (conn.raw !== null) conn.raw.resetAndDestroy();
        else conn.socket.destroy();
      },
      closed: hooks.isClosed,
    };
  }

  /** What becomes of an arriving request: the first fault that does not let it through decides. */
  verdict(request: FaultRequest): RequestVerdict {
    for (const m of this.#modules) {
      const verdict = m.onRequest?.(request, this.#tools);
      if (verdict !== undefined && verdict.action !== 'forward') return verdict;
    }
    return FORWARD;
  }

  /** `conn` has no request in flight any more. */
  idle(conn: Conn): void {
    for (const m of this.#modules) m.onIdle?.(conn, this.#tools);
  }

  /** The filter of a forwarded response's body: the first fault's that filters it (a held body is never cut
   * too); null: the body passes untouched. */
  body(conn: Conn, nth: number, streaming: boolean): BodyFilter | null {
    for (const m of this.#modules) {
      const filter = m.body?.(conn, nth, streaming, this.#tools) ?? null;
      if (filter !== null) return filter;
    }
    return null;
  }

  /** How often each fault acted. */
  counts(): Record<HopFault['kind'], number> {
    return { ...this.#counts };
  }
}

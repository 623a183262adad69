// What a run service is and what it is given: the contract between run.ts and each service (services.ts
// lists them). Its own module so services import it without importing the list that imports them.
import type { Workload } from '../config/index.js';
import type { PathKind } from '../types/index.js';
import type { RunBus } from './bus.js';
import type { RouteInfo } from './route.js';

export interface RunContext {
  readonly workload: Workload;
  readonly dir: string;
  readonly bus: RunBus;
  /** performance.now() at run start. */
  readonly runStartMs: number;
  /** Where agent requests go (the hop or proxy in front of the engine, when there is one). */
  readonly requestUrl: string;
  /** The engine itself (the embedded one, or `target.url`). */
  readonly engineUrl: string;
  /** The embedded deployment's metrics endpoints (`router`, `prefill`, `decode`), when the run started one. */
  readonly embeddedTargets?: readonly { readonly name: string; readonly url: string }[] | null;
  readonly path: PathKind;
  /** The whole path: TLS, CONNECT proxy, and the direct URL around it (`bypassUrl`) for canaries.
   * Always set by a run; a context built by hand (tests) may leave it out: direct to `requestUrl`, no bypass. */
  readonly route?: RouteInfo;
  /** Aborted when the run stops. */
  readonly stop: AbortSignal;
  readonly log: (line: string) => void;
  /** Requests in flight right now. */
  inFlight(): number;
}

export interface RunService {
  readonly name: string;
  start(ctx: RunContext): Promise<void> | void;
  /** Must return within a couple of seconds whatever the network does. */
  stop(): Promise<void> | void;
}

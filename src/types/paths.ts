// Events of the network paths: canaries (a tiny request on the proxied path and around it, every few seconds)
// and the built-in hop's faults as they act. Both are written to events.jsonl.
import type { HangPhase, PathKind, RequestStatus } from './records.js';

/** Which side of the proxy a canary took: the agents' path, or straight to the engine (`target.bypass`). */
export type CanaryLeg = 'proxied' | 'direct';

/** One canary request. */
export interface CanaryEvent {
  kind: 'canary';
  /** Wall-clock send time (ISO 8601). */
  t: string;
  /** Milliseconds since the run started, at send. */
  run_ms: number;
  leg: CanaryLeg;
  /** The path kind the request took (`direct` for the bypass leg). */
  path: PathKind;
  url: string;
  ok: boolean;
  status: RequestStatus;
  /** Send → end (or → the error/hang). */
  latency_ms: number;
  ttft_ms: number | null;
  http_status: number | null;
  /** Error class (as in request records) when status is `error`. */
  error_class: string | null;
  /** Where it hung, when status is `hang`. */
  hang_phase: HangPhase | null;
  /** Which request on its socket (1 = fresh connection), when it got one. */
  connection_nth: number | null;
  /** The error's message (an HTTP error's body starts it), when status is `error`. Absent in files written
   * before it existed. */
  error?: string | null;
  /** An HTTP error's body: the server's JSON error (`json`) or a proxy's own page (`page`), as on request records. */
  error_body?: 'json' | 'page';
  /** True when the canary due at this slot of the grid was not sent: all the leg's canaries allowed at once
   * (`monitor.canary_concurrency`) were still out. Then `status` is `error`, `error_class` `not_sent`, and it
   * counts as failed: time the path could not be sampled because it held every canary. Absent otherwise. */
  not_sent?: true;
}

/** A fault of the built-in hop acted on a request or a connection. */
export interface HopFaultEvent {
  kind: 'hop_fault';
  t: string;
  run_ms: number;
  fault: string;
  /** The hop's id of the client connection. */
  connection: number;
  /** Which request on that connection (0: the connection was idle). */
  request: number;
  detail: string;
}

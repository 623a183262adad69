// The embedded deployment's request traces, as SGLang exports them with `--enable-trace`: each server (router,
// prefill, decode; `engine` for one unified server) records a span per request, parented on the incoming W3C
// `traceparent`, with a child span per stage the request went through, named as SGLang names them (types/engine-stages.ts:
// prefill_waiting, prefill_forward, prefill_transfer_kv_cache, decode_waiting, decode_forward…). The router passes its own span on to the workers. A request stuck in a stage keeps that
// stage open: `close()` hands over what is known, the open stages cut at the stop and marked so, and the hung
// request's trace shows where it stopped. Spans are plain data here; exporting them is the caller's
// (commands/engine.ts, the run) — the engine imports nothing of OpenTelemetry.
import { performance } from 'node:perf_hooks';
import { nextTraceIds, parseTraceparent, traceparent } from '../util/index.js';
import type { EngineStage } from '../types/index.js';
import type { EngineServerName } from './options.js';

/** One span of a server, in Unix ms; `endMs` null while it is open. */
export interface EngineSpan {
  service: EngineServerName;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** The request's span on its server (SERVER kind) or one of its stages (INTERNAL). */
  stage: boolean;
  startMs: number;
  endMs: number | null;
  attributes: Record<string, string | number | boolean>;
  /** Why it ended badly (cancelled, failed, still open at the stop); null when it did not. */
  error: string | null;
}

/** Finished spans kept for the taker at most; past it the oldest are dropped (counted). */
const MAX_FINISHED = 20_000;

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Every server's traces of one deployment. */
export class EngineTraces {
  #finished: EngineSpan[] = [];
  readonly #open = new Set<RequestTrace>();
  dropped = 0;

  /** A request arriving at `service`, under the trace of its `traceparent` header (a fresh trace without one). */
  start(service: EngineServerName, header: unknown, attributes: Record<string, string | number | boolean>, atMs = nowMs()): RequestTrace {
    const parent = parseTraceparent(header);
    const trace = new RequestTrace(this, service, parent, attributes, atMs);
    this.#open.add(trace);
    return trace;
  }

  /** The spans finished since the last take. */
  take(): EngineSpan[] {
    const out = this.#finished;
    this.#finished = [];
    return out;
  }

  /** The deployment stopped: what finished, and every request still open as it stands, its open stage and
   * its server span ending now, marked `still open when the engine stopped`. */
  close(): EngineSpan[] {
    const at = nowMs();
    for (const trace of [...this.#open]) trace.cut(at);
    return this.take();
  }

  /** @internal */
  finished(trace: RequestTrace, spans: EngineSpan[]): void {
    this.#open.delete(trace);
    this.#finished.push(...spans);
    if (this.#finished.length > MAX_FINISHED) {
      const over = this.#finished.length - MAX_FINISHED;
      this.#finished.splice(0, over);
      this.dropped += over;
    }
  }
}

/** One request on one server: its span and its stages, one after another. */
export class RequestTrace {
  readonly #traces: EngineTraces;
  readonly #root: EngineSpan;
  readonly #stages: EngineSpan[] = [];
  #ended = false;

  constructor(traces: EngineTraces, service: EngineServerName, parent: { traceId: string; spanId: string } | null, attributes: Record<string, string | number | boolean>, atMs: number) {
    this.#traces = traces;
    this.#root = {
      service,
      traceId: parent?.traceId ?? nextTraceIds().traceId,
      spanId: nextTraceIds().spanId,
      parentSpanId: parent?.spanId ?? null,
      name: service === 'router' ? 'router request' : `${service} request`,
      stage: false,
      startMs: atMs,
      endMs: null,
      attributes,
      error: null,
    };
  }

  /** The header a server passes on: this span as the parent of the next server's. */
  get traceparent(): string {
    return traceparent({ traceId: this.#root.traceId, spanId: this.#root.spanId });
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The request moved into stage `name` (the previous one ends now). */
  stage(name: EngineStage, atMs = nowMs()): void {
    if (this.#ended) return;
    this.#endStage(atMs, null);
    this.#stages.push({ ...this.#root, spanId: nextTraceIds().spanId, parentSpanId: this.#root.spanId, name, stage: true, startMs: atMs, endMs: null, attributes: {}, error: null });
  }

  /** Another attribute of the request's span (its id, tokens). */
  set(key: string, value: string | number | boolean): void {
    this.#root.attributes[key] = value;
  }

  /** The request ended here (`error`: why it ended badly); its stage and span close now. */
  end(error: string | null = null, atMs = nowMs()): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#endStage(atMs, error);
    this.#root.endMs = atMs;
    this.#root.error = error;
    this.#traces.finished(this, [this.#root, ...this.#stages]);
  }

  /** @internal The engine stopped with this request still in it. */
  cut(atMs: number): void {
    const open = this.#stages.at(-1);
    if (open !== undefined && open.endMs === null) open.attributes['engine.stage.open'] = true;
    this.#root.attributes['engine.request.open'] = true;
    this.end(`still open when the engine stopped${open === undefined ? '' : `, in ${open.name}`}`, atMs);
  }

  #endStage(atMs: number, error: string | null): void {
    const open = this.#stages.at(-1);
    if (open === undefined || open.endMs !== null) return;
    open.endMs = atMs;
    open.error = error;
  }
}

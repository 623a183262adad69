// What running agents in a phase needs, whichever way the phase starts them (a fixed set of agents, a sweep
// level, arrivals at a rate, stages): the shared context, each agent's round target, and the filter their
// events go through on the way to the bus (the phase a request is recorded in, warm-up, live ITL gaps).
import { performance } from 'node:perf_hooks';
import type { Workload, ToolSpec } from '../config/index.js';
import type { Transport, ConnectionTracker } from '../transport/index.js';
import type { RoundTarget } from '../agent/index.js';
import { ALL_ROUNDS, type HistogramSet, type LatencyHistogram } from '../metrics/index.js';
import { realClock } from '../watchdog/index.js';
import type { HangEvent, PathKind, RunEvent } from '../types/index.js';
import type { RunBus } from './bus.js';
import type { Shard } from './shard.js';

/** What every phase of a run shares. */
export interface PhaseRunContext {
  workload: Workload;
  bus: RunBus;
  transport: Transport;
  tracker: ConnectionTracker;
  headers: Record<string, string>;
  endpoint: string;
  path: PathKind;
  runStartMs: number;
  /** Live ITL gaps go here (records keep only per-request stats). */
  histograms: HistogramSet;
  system: string;
  tools: readonly ToolSpec[];
  /** Aborted when the run stops: no phase starts after it, the running one ends. */
  stop: AbortSignal;
  /** Ends in-flight requests (default `stop`); a run may pass a later signal so they get a grace. */
  abortInFlight?: AbortSignal;
  /** Conversations each agent has started so far in the run, so a later phase's ids continue (`a0-c2`…). */
  conversations: Map<number, number>;
  /** This process's share of every phase's agents (`--shard i/N`); none: all of them. */
  shard?: Shard | null;
  /** Adds what the monitor knows to a hang event before anyone sees it. */
  enrichHang?: (event: HangEvent) => HangEvent;
  /** Token events this process's streams received so far (the client sampler reports it as `streamed_tokens`). */
  streamed: { tokens: number };
}

/** Where agent `lane` of this process sends its rounds; `onGap` receives its live inter-token gaps. */
export function agentTarget(ctx: PhaseRunContext, lane: number, onGap: (gapMs: number) => void): RoundTarget {
  const w = ctx.workload.watchdog;
  const placement = ctx.workload.target.request_id;
  // `auto`: SGLang's `rid` for the embedded engine only; a server of yours may refuse a field it does not know.
  const bodyField = placement.body_field === 'auto' ? (ctx.workload.target.url === null ? 'rid' : null) : placement.body_field;
  // Each request's own X-Request-Id replaces one set in target.headers (two would reach the server).
  // Likewise its own traceparent replaces one set there.
  const own = [...(placement.header ? ['x-request-id'] : []), ...(ctx.workload.tracing.traceparent ? ['traceparent'] : [])];
  const headers = own.length === 0 ? ctx.headers : Object.fromEntries(Object.entries(ctx.headers).filter(([name]) => !own.includes(name.toLowerCase())));
  return {
    lane: ctx.transport.lane(lane),
    tracker: ctx.tracker,
    clock: realClock,
    deadlines: { connectMs: w.connect_ms, headersMs: w.headers_ms, firstTokenMs: w.first_token_ms, stallMs: w.stall_ms, totalMs: w.total_ms },
    path: ctx.path,
    endpoint: ctx.endpoint,
    headers,
    requestId: { header: placement.header, bodyField },
    traceparent: ctx.workload.tracing.traceparent,
    runStartMs: ctx.runStartMs,
    // A connect-level failure on a proxied path is the proxy's (`proxy_unreachable`): the CONNECT proxy, or
    // the TLS proxy the requests are sent to.
    proxyUrl: ctx.transport.options.connectProxy ?? (ctx.path === 'proxy' ? ctx.transport.options.url : null),
    // Every token event but a request's first comes with a gap: together they count the tokens as they stream.
    onGap: (gapMs) => {
      ctx.streamed.tokens += 1;
      onGap(gapMs);
    },
    onFirstToken: (agent, round, ttftMs) => {
      ctx.streamed.tokens += 1;
      ctx.bus.emit({ kind: 'first_token', agent, round, run_ms: performance.now() - ctx.runStartMs, ttft_ms: ttftMs });
    },
  };
}

export interface AgentEventOptions {
  /** The phase a request sent at `runMs` is recorded in (one name for a plain phase; the running stage). */
  phaseAt: (runMs: number) => string;
  /** Requests sent before this (ms since the run started) are warm-up. @default -Infinity */
  warmupEndMs?: number;
  /** Count each agent's conversations from their first request (`ctx.conversations`); off when the caller
   * numbers them itself. @default true */
  countConversations?: boolean;
}

/** The agents' events on their way to the bus: a hang gets the monitor's gauges, a record the phase it was
 * sent in and its warm-up flag (on a copy: an agent's record is never mutated), and each request's live ITL
 * gaps go to its phase × round histograms (not the warm-up's). */
export class AgentEvents {
  readonly #ctx: PhaseRunContext;
  readonly #o: AgentEventOptions;
  readonly #warmupEndMs: number;
  /** Per agent: the ITL histogram of its in-flight request's round (null in the warm-up), looked up once a
   * request; each gap is recorded once, there (the phase's all-rounds histogram is derived from the rounds). */
  readonly #current = new Map<number, LatencyHistogram | null>();

  constructor(ctx: PhaseRunContext, options: AgentEventOptions) {
    this.#ctx = ctx;
    this.#o = options;
    this.#warmupEndMs = options.warmupEndMs ?? -Infinity;
  }

  emit(index: number, raw: RunEvent): void {
    const ctx = this.#ctx;
    // A hang record carries the latest gauges of every monitored target (when the monitor runs).
    const event = raw.kind === 'hang' && ctx.enrichHang !== undefined ? ctx.enrichHang(raw) : raw;
    if (event.kind === 'request_start') {
      const phase = this.#o.phaseAt(event.run_ms);
      this.#current.set(index, event.run_ms < this.#warmupEndMs ? null : ctx.histograms.get('itl', phase, event.round));
      if (event.round === 1 && this.#o.countConversations !== false) ctx.conversations.set(index, (ctx.conversations.get(index) ?? 0) + 1);
    } else if (event.kind === 'request' || event.kind === 'hang') {
      const warmup = event.record.run_ms < this.#warmupEndMs;
      const phase = this.#o.phaseAt(event.record.run_ms);
      if (warmup || phase !== event.record.phase) {
        // One copy of the record (the agent's own is never mutated), marked on the copy.
        const record: typeof event.record = { ...event.record, phase };
        if (warmup) record.warmup = true;
        ctx.bus.emit({ ...event, record });
        return;
      }
    }
    ctx.bus.emit(event);
  }

  /** A live inter-token gap of agent `index`'s in-flight request. */
  onGap(index: number, gapMs: number): void {
    const now = this.#current.get(index);
    if (now === undefined) this.#ctx.histograms.recordMs('itl', this.#o.phaseAt(performance.now() - this.#ctx.runStartMs), ALL_ROUNDS, gapMs);
    else if (now !== null) now.recordMs(gapMs);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

// Canaries: every few seconds a tiny streaming request on the agents' path (through the proxy or hop) and
// one straight to the engine around it. When agents hang, which of the two still answers says where the
// fault is (lesson 3 of the incident: compare the proxied path with a direct canary before blaming the engine).
// Both legs send on one fixed grid, whatever their earlier canaries do, so they sample the same moments:
// each canary has its own deadline, at most `concurrency` are out per leg, and a slot with no room is
// recorded `not_sent` (failed time), never skipped silently.
import { performance } from 'node:perf_hooks';
import { Transport, ConnectionTracker, type TlsOptions } from '../transport/index.js';
import { sendRound, type RoundTarget } from '../agent/index.js';
import { realClock } from '../watchdog/index.js';
import type { CanaryEvent, CanaryLeg, PathKind } from '../types/index.js';

/** One side of the comparison: where its canaries go and how. */
export interface CanaryLegSpec {
  url: string;
  path: PathKind;
  tls: TlsOptions;
  connectProxy: string | null;
}

export interface CanaryOptions {
  proxied: CanaryLegSpec;
  direct: CanaryLegSpec;
  model: string;
  /** Authorization, User-Agent and the workload's own headers, already resolved. */
  headers: Record<string, string>;
  /** `target.extra_body`: fields merged into every canary's body, as into the agents'. @default {} */
  extraBody?: Readonly<Record<string, unknown>>;
  intervalMs: number;
  /** One canary's deadline, for every phase of it. */
  timeoutMs: number;
  /** Canaries of one leg out at once, at most (each on its own socket). @default 2 */
  concurrency?: number;
  /** performance.now() at run start, for `run_ms`. */
  runStartMs: number;
  emit: (event: CanaryEvent) => void;
}

export interface CanaryHandle {
  /** Stops sending; in-flight canaries are dropped unrecorded (the run is ending). Bounded. */
  stop(): Promise<void>;
}

/** A few tokens are enough: the canary asks "does a request get through", not "how fast is decode". */
export const CANARY_MAX_TOKENS = 2;
const CLOSE_GRACE_MS = 500;

function canaryBody(model: string, extraBody: Readonly<Record<string, unknown>> = {}): string {
  return JSON.stringify({
    ...extraBody,
    model,
    messages: [{ role: 'user', content: 'roundload canary: answer with one word.' }],
    max_tokens: CANARY_MAX_TOKENS,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
}

const MAX_ERROR_CHARS = 300;

class Leg {
  readonly #transport: Transport;
  readonly #tracker = new ConnectionTracker();
  readonly #target: RoundTarget;
  readonly #spec: CanaryLegSpec;
  readonly #name: CanaryLeg;
  readonly #concurrency: number;
  readonly #runStartMs: number;
  #inFlight = 0;
  #sent = 0;

  constructor(name: CanaryLeg, spec: CanaryLegSpec, options: CanaryOptions) {
    this.#name = name;
    this.#spec = spec;
    this.#concurrency = options.concurrency ?? 2;
    this.#runStartMs = options.runStartMs;
    this.#transport = new Transport({
      url: spec.url,
      path: spec.path,
      tls: spec.tls,
      connectProxy: spec.connectProxy,
      // One socket per canary out at once, kept alive between them.
      connection: 'pool',
      agents: this.#concurrency,
      poolConnections: this.#concurrency,
      // Kept alive from one canary to the next, like an agent's socket between rounds.
      keepAliveTimeoutMs: options.intervalMs + 10_000,
      connectTimeoutMs: options.timeoutMs,
      headersTimeoutMs: options.timeoutMs + 5000,
      bodyTimeoutMs: options.timeoutMs + 5000,
    });
    const t = options.timeoutMs;
    this.#target = {
      lane: this.#transport.lane(0),
      tracker: this.#tracker,
      clock: realClock,
      deadlines: { connectMs: t, headersMs: t, firstTokenMs: t, stallMs: t, totalMs: t },
      path: spec.path,
      endpoint: `${this.#transport.basePath}/v1/chat/completions`,
      headers: options.headers,
      runStartMs: options.runStartMs,
    };
  }

  /** The event of a slot with no room: every canary allowed at once was still out. */
  notSent(): CanaryEvent {
    const now = performance.now();
    return {
      kind: 'canary',
      t: new Date().toISOString(),
      run_ms: Math.round((now - this.#runStartMs) * 1000) / 1000,
      leg: this.#name,
      path: this.#spec.path,
      url: this.#spec.url,
      ok: false,
      status: 'error',
      latency_ms: 0,
      ttft_ms: null,
      http_status: null,
      error_class: 'not_sent',
      hang_phase: null,
      connection_nth: null,
      error: `not sent: the leg's ${this.#concurrency} canar${this.#concurrency === 1 ? 'y' : 'ies'} allowed at once were all still out`,
      not_sent: true,
    };
  }

  /** Sends the canary of one slot, or records it not sent when the leg has no room; null once stopped. */
  async send(body: string, stop: AbortSignal): Promise<CanaryEvent | null> {
    if (stop.aborted) return null;
    if (this.#inFlight >= this.#concurrency) return this.notSent();
    this.#inFlight += 1;
    this.#sent += 1;
    try {
      const { record: r } = await sendRound(this.#target, { agent: -1, conversation: `canary-${this.#name}`, round: this.#sent, phase: 'canary', body }, stop);
      if (stop.aborted) return null;
      return {
        kind: 'canary',
        t: r.t,
        run_ms: r.run_ms,
        leg: this.#name,
        path: this.#spec.path,
        url: this.#spec.url,
        ok: r.status === 'ok',
        status: r.status,
        latency_ms: r.e2e_ms,
        ttft_ms: r.ttft_ms,
        http_status: r.http_status,
        error_class: r.error?.class ?? null,
        hang_phase: r.hang?.phase ?? null,
        connection_nth: r.connection?.nth ?? null,
        error: r.error === null ? null : r.error.message.slice(0, MAX_ERROR_CHARS),
        ...(r.error?.body === undefined ? {} : { error_body: r.error.body }),
      };
    } finally {
      this.#inFlight -= 1;
    }
  }

  async close(): Promise<void> {
    this.#tracker.close();
    await this.#transport.close(CLOSE_GRACE_MS);
  }
}

/** Starts sending canaries on both legs now and then at every `intervalMs` of a fixed grid (a slot missed
 * because the client's own loop was late is skipped: the run's client samples show that time). */
export function startCanaries(options: CanaryOptions): CanaryHandle {
  const legs = [new Leg('proxied', options.proxied, options), new Leg('direct', options.direct, options)];
  const body = canaryBody(options.model, options.extraBody);
  const stop = new AbortController();
  const pending = new Set<Promise<void>>();
  const gridStartMs = performance.now();
  let slot = 0;
  let timer: NodeJS.Timeout | null = null;
  const schedule = (): void => {
    if (stop.signal.aborted) return;
    const now = performance.now();
    slot = Math.max(slot + 1, Math.ceil((now - gridStartMs) / options.intervalMs));
    timer = setTimeout(tick, Math.max(0, gridStartMs + slot * options.intervalMs - now));
    timer.unref();
  };
  const tick = (): void => {
    schedule();
    for (const leg of legs) {
      const p = leg
        .send(body, stop.signal)
        .then((event) => {
          if (event !== null && !stop.signal.aborted) options.emit(event);
        })
        .catch(() => {}) // sendRound never rejects; belt and braces for a canary that must never crash a run
        .finally(() => pending.delete(p));
      pending.add(p);
    }
  };
  tick();
  let stopping: Promise<void> | null = null;
  return {
    stop: () =>
      (stopping ??= (async () => {
        if (timer !== null) clearTimeout(timer);
        stop.abort();
        const bound = new Promise<void>((resolve) => setTimeout(resolve, options.timeoutMs + CLOSE_GRACE_MS).unref());
        await Promise.race([Promise.all([...pending]), bound]);
        await Promise.all(legs.map((l) => l.close()));
      })()),
  };
}

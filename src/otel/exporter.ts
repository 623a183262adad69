// Spans to an OTLP/HTTP receiver, off the requests' path: `add` only queues (bounded: past the bound a span
// is dropped and counted, so a dead or slow collector costs spans, never memory or latency); a timer sends a
// batch at a time, one request in flight; `finish` sends what is left within its bound and gives the rest
// up. Every failure is counted and said once, never thrown.
import type { TracingSummary } from '../analysis/index.js';
import type { OtlpExport } from '../config/index.js';
import { redactUrlCredentials } from '../util/index.js';
import { encodeTraceRequestJson } from './otlp-json.js';
import { encodeTraceRequest } from './otlp-proto.js';
import type { OtelSpan, SpanSource } from './span.js';

/** What the export did over the run: summary.json `tracing` but the run's trace id. */
export type SpanExportStats = Omit<TracingSummary, 'run_trace_id'>;

export interface SpanExporterOptions {
  settings: OtlpExport;
  source: SpanSource;
  /** Notices and warnings (stderr). */
  log: (line: string) => void;
  /** What the log lines call it (`roundload's spans`, `the engine's spans`). @default "spans" */
  what?: string;
}

export class SpanExporter {
  readonly #o: SpanExporterOptions;
  readonly #shown: string;
  #queue: OtelSpan[] = [];
  readonly #stats: SpanExportStats;
  #inFlight: Promise<void> | null = null;
  readonly #timer: NodeJS.Timeout;
  /** Aborted when the end's bound runs out: the request in flight is given up. */
  readonly #end = new AbortController();
  #closed = false;
  readonly #warned = { full: false, failed: false };

  constructor(o: SpanExporterOptions) {
    this.#o = o;
    this.#shown = redactUrlCredentials(o.settings.url);
    this.#stats = { endpoint: this.#shown, protocol: o.settings.protocol, spans: 0, exported: 0, dropped: 0, requests: 0, failed_requests: 0, last_error: null };
    this.#timer = setInterval(() => this.#kick(), o.settings.intervalMs).unref();
  }

  /** Queues a span; a full queue (or a finished export) drops it and counts it. Never blocks, never throws. */
  add(span: OtelSpan): void {
    this.#stats.spans += 1;
    if (this.#closed || this.#queue.length >= this.#o.settings.maxQueueSpans) {
      this.#stats.dropped += 1;
      if (!this.#closed && !this.#warned.full) {
        this.#warned.full = true;
        this.#o.log(`warning: tracing: ${this.#o.settings.maxQueueSpans} ${this.#what()} wait for ${this.#shown}; new ones are dropped (counted at the end)`);
      }
      return;
    }
    this.#queue.push(span);
    if (this.#queue.length >= this.#o.settings.maxBatchSpans) this.#kick();
  }

  stats(): SpanExportStats {
    return { ...this.#stats };
  }

  /** Sends what is queued within `flushTimeoutMs`, drops the rest, logs one line; idempotent. */
  async finish(): Promise<SpanExportStats> {
    if (this.#closed) return this.stats();
    this.#closed = true;
    clearInterval(this.#timer);
    const deadline = performance.now() + this.#o.settings.flushTimeoutMs;
    const cut = setTimeout(() => this.#end.abort(), this.#o.settings.flushTimeoutMs).unref();
    await this.#inFlight;
    while (this.#queue.length > 0 && !this.#end.signal.aborted) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await this.#send(this.#take(), Math.min(this.#o.settings.timeoutMs, left));
    }
    clearTimeout(cut);
    this.#stats.dropped += this.#queue.length;
    this.#queue = [];
    this.#o.log(this.#describe());
    return this.stats();
  }

  #what(): string {
    return this.#o.what ?? 'spans';
  }

  #take(): OtelSpan[] {
    return this.#queue.splice(0, this.#o.settings.maxBatchSpans);
  }

  /** Sends the next batch unless one is in flight (or the end has begun: finish sends the rest itself). */
  #kick(): void {
    if (this.#inFlight !== null || this.#queue.length === 0 || this.#closed) return;
    this.#inFlight = this.#send(this.#take(), this.#o.settings.timeoutMs).finally(() => {
      this.#inFlight = null;
    });
  }

  async #send(batch: OtelSpan[], timeoutMs: number): Promise<void> {
    const { settings, source } = this.#o;
    this.#stats.requests += 1;
    const json = settings.protocol === 'http/json';
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
    try {
      const res = await fetch(settings.url, {
        method: 'POST',
        headers: { ...settings.headers, 'content-type': json ? 'application/json' : 'application/x-protobuf', 'user-agent': 'roundload' },
        body: json ? encodeTraceRequestJson(source, batch) : encodeTraceRequest(source, batch),
        signal: AbortSignal.any([timeout, this.#end.signal]),
      });
      // The body is read (bounded by the same signal) so the connection is free for the next request.
      const text = await res.text();
      if (res.status >= 200 && res.status <= 299) {
        this.#stats.exported += batch.length;
        return;
      }
      this.#failed(batch.length, `HTTP ${res.status}${text.trim() === '' ? '' : `: ${text.trim().split('\n')[0]!.slice(0, 200)}`}`);
    } catch (error) {
      const why = timeout.aborted ? `no answer within ${Math.round(timeoutMs) / 1000} s` : this.#end.signal.aborted ? 'given up at the end of the run' : describe(error);
      this.#failed(batch.length, why);
    }
  }

  #failed(spans: number, why: string): void {
    this.#stats.failed_requests += 1;
    this.#stats.dropped += spans;
    this.#stats.last_error = why;
    if (this.#warned.failed) return;
    this.#warned.failed = true;
    this.#o.log(`warning: tracing: exporting ${this.#what()} to ${this.#shown} failed: ${why}; the spans of a failed export are dropped (counted at the end), the run goes on`);
  }

  #describe(): string {
    const s = this.#stats;
    const sent = `tracing: ${s.exported} of ${s.spans} ${this.#what()} exported to ${this.#shown} (${this.#o.settings.protocol})`;
    if (s.dropped === 0) return sent;
    return `warning: ${sent}; ${s.dropped} dropped, ${s.failed_requests} of ${s.requests} export requests failed${s.last_error === null ? '' : ` (last: ${s.last_error})`}`;
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${message}${cause}`;
}

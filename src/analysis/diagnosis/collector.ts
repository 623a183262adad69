// Collects, in bounded memory, what the diagnosis reads from a run's stream of records and events: hung and
// failed requests, canaries, scrapes, every client sample, TTFT over time and buffered streams. The gauge
// verdicts, flow counters and client activity come from the summary's own monitor store at the end.
import type { BufferingFigures, CanaryEvent, ClientSampleEvent, Diagnosis, GaugeVerdict, PathKind, RequestRecord, ScrapeEvent } from '../../types/index.js';
import { flowCounter, type ClientActivity, type GaugeStore } from '../../monitor/index.js';
import { canaryPoint, clientWindow, errorSpan, hangSpan, scrapePoint, type CanaryPoint, type ClientWindow, type ErrorSpan, type FlowTrack, type HangSpan, type RequestActivity, type ScrapePoint } from './inputs.js';
import { diagnose } from './judge.js';

/** Most items of each kind kept (the rest are counted): bounded memory over a night. */
const MAX_HANG_SPANS = 10_000;
const MAX_ERROR_SPANS = 10_000;
const MAX_CANARIES = 100_000;
const MAX_SCRAPES = 200_000;
const MAX_CLIENT_WINDOWS = 200_000;
/** A stream with at least this many tokens can tell buffered from streamed. */
export const BUFFERED_MIN_TOKENS = 8;
/** TTFT kept per quarter second of send time: sums and counts, not requests. */
const TTFT_BUCKET_MS = 250;

/** Mean TTFT of completed requests by send time, in fixed buckets. */
class TtftTimeline {
  #sum = new Float64Array(1024);
  #count = new Uint32Array(1024);
  #buckets = 0;

  add(sentMs: number, ttftMs: number): void {
    const i = Math.max(0, Math.floor(sentMs / TTFT_BUCKET_MS));
    if (i >= this.#sum.length) {
      let n = this.#sum.length;
      while (n <= i) n *= 2;
      const sum = new Float64Array(n);
      sum.set(this.#sum);
      const count = new Uint32Array(n);
      count.set(this.#count);
      this.#sum = sum;
      this.#count = count;
    }
    this.#sum[i] = this.#sum[i]! + ttftMs;
    this.#count[i] = this.#count[i]! + 1;
    this.#buckets = Math.max(this.#buckets, i + 1);
  }

  mean(fromMs: number, toMs: number): { count: number; meanMs: number } {
    let sum = 0;
    let count = 0;
    const last = Math.min(this.#buckets - 1, Math.floor(toMs / TTFT_BUCKET_MS));
    for (let i = Math.max(0, Math.floor(fromMs / TTFT_BUCKET_MS)); i <= last; i += 1) {
      sum += this.#sum[i]!;
      count += this.#count[i]!;
    }
    return { count, meanMs: count === 0 ? 0 : sum / count };
  }
}

export class DiagnosisCollector {
  readonly #hangs: HangSpan[] = [];
  #hangsOmitted = 0;
  readonly #errors: ErrorSpan[] = [];
  #errorsOmitted = 0;
  readonly #canaries: CanaryPoint[] = [];
  readonly #scrapes: ScrapePoint[] = [];
  readonly #client: ClientWindow[] = [];
  readonly #ttft = new TtftTimeline();
  #path: PathKind | null = null;
  #judged = 0;
  #buffered = 0;

  /** Any request record. */
  add(r: RequestRecord): void {
    this.#path ??= r.path;
    if (r.status === 'hang') {
      if (this.#hangs.length < MAX_HANG_SPANS) this.#hangs.push(hangSpan(r));
      else this.#hangsOmitted += 1;
    } else if (r.status === 'error') {
      // The run's own stop is not a failure of anything it measures.
      if (r.error?.class === 'aborted') return;
      if (this.#errors.length < MAX_ERROR_SPANS) this.#errors.push(errorSpan(r));
      else this.#errorsOmitted += 1;
    } else {
      if (r.ttft_ms !== null) this.#ttft.add(r.run_ms, r.ttft_ms);
      if (r.ttft_ms !== null && (r.completion_tokens ?? 0) >= BUFFERED_MIN_TOKENS) {
        this.#judged += 1;
        if (r.buffered_stream === true) this.#buffered += 1;
      }
    }
  }

  addCanary(e: CanaryEvent): void {
    if (this.#canaries.length < MAX_CANARIES) this.#canaries.push(canaryPoint(e));
  }

  addScrape(e: ScrapeEvent): void {
    if (this.#scrapes.length < MAX_SCRAPES) this.#scrapes.push(scrapePoint(e));
  }

  /** Every client sample (the diagnosis decides which were late). */
  addClientSample(s: ClientSampleEvent): void {
    if (this.#client.length < MAX_CLIENT_WINDOWS) this.#client.push(clientWindow(s));
  }

  buffering(): BufferingFigures {
    return { judged: this.#judged, buffered: this.#buffered, share: this.#judged === 0 ? 0 : Math.round((this.#buffered / this.#judged) * 1000) / 1000 };
  }

  diagnose(gauges: readonly GaugeVerdict[], store: GaugeStore | null = null, client: ClientActivity | null = null): Diagnosis {
    const flows: FlowTrack[] = [];
    for (const t of store?.targets.values() ?? []) {
      const c = flowCounter(t);
      if (c !== null) flows.push({ target: t.name, counter: c.name, moved: c.moved });
    }
    const ttft = this.#ttft;
    const activity: RequestActivity | null =
      client === null || client.size === 0
        ? null
        : {
            completionsIn: (a, b) => client.completionsIn(a, b),
            streamingShare: (a, b) => client.streamingCoverage(a, b),
            inFlightShare: (a, b) => client.coverage(a, b),
            ttft: (a, b) => ttft.mean(a, b),
          };
    return diagnose({
      path: this.#path,
      hangs: this.#hangs,
      hangsOmitted: this.#hangsOmitted,
      errors: this.#errors,
      errorsOmitted: this.#errorsOmitted,
      canaries: this.#canaries,
      scrapes: this.#scrapes,
      flows,
      gauges,
      client: this.#client,
      activity,
      buffering: this.buffering(),
    });
  }
}

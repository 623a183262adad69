// The router's Prometheus series, in the older sgl-router generation's names (`sgl_router_*`, the Rust router
// that `python -m sglang_router.launch_router` starts; the newer SMG gateway writes `smg_*`), served on the
// router's own metrics port as its Rust exporter writes them.
import { Histogram, renderExposition, type Labels, type MetricFamily } from './metrics.js';

/** sgl-router's buckets for every `*_duration_seconds` histogram. */
const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 45, 60, 90, 120, 180, 240];

/** One metric's series, by label set. */
class Series<T> {
  readonly #byKey = new Map<string, { labels: Labels; value: T }>();
  constructor(private readonly make: () => T) {}

  get(labels: Labels): { labels: Labels; value: T } {
    const key = JSON.stringify(labels);
    let entry = this.#byKey.get(key);
    if (entry === undefined) {
      entry = { labels, value: this.make() };
      this.#byKey.set(key, entry);
    }
    return entry;
  }

  all(): { labels: Labels; value: T }[] {
    return [...this.#byKey.values()];
  }
}

type Help = readonly [name: string, help: string];

const COUNTERS: readonly Help[] = [
  ['sgl_router_requests_total', 'Total number of requests by route and method'],
  ['sgl_router_request_errors_total', 'Total number of request errors by route and error type'],
  ['sgl_router_processed_requests_total', 'Total requests processed by each worker'],
  ['sgl_router_pd_requests_total', 'Total PD requests by route'],
  ['sgl_router_pd_prefill_requests_total', 'Total prefill requests per worker'],
  ['sgl_router_pd_decode_requests_total', 'Total decode requests per worker'],
  ['sgl_router_pd_errors_total', 'Total PD errors by error type'],
  ['sgl_router_pd_prefill_errors_total', 'Total prefill server errors'],
  ['sgl_router_pd_decode_errors_total', 'Total decode server errors'],
  ['sgl_router_pd_stream_errors_total', 'Total streaming errors per worker'],
];
const GAUGES: readonly Help[] = [
  ['sgl_router_active_workers', 'Number of currently active workers'],
  ['sgl_router_worker_health', 'Worker health status (1=healthy, 0=unhealthy)'],
  ['sgl_router_running_requests', 'Number of running requests per worker'],
];
const HISTOGRAMS: readonly Help[] = [
  ['sgl_router_request_duration_seconds', 'Request duration in seconds by route'],
  ['sgl_router_pd_request_duration_seconds', 'PD request duration by route'],
];

export class RouterMetrics {
  readonly #counters = new Map<string, Series<{ n: number }>>(COUNTERS.map(([name]) => [name, new Series(() => ({ n: 0 }))]));
  readonly #gauges = new Map<string, Series<{ n: number }>>(GAUGES.map(([name]) => [name, new Series(() => ({ n: 0 }))]));
  readonly #histograms = new Map<string, Series<Histogram>>(HISTOGRAMS.map(([name]) => [name, new Series(() => new Histogram(DURATION_BUCKETS_S))]));

  inc(name: string, labels: Labels = {}): void {
    const series = this.#counters.get(name);
    if (series === undefined) throw new Error(`unknown router counter ${name}`);
    series.get(labels).value.n += 1;
  }

  set(name: string, labels: Labels, value: number): void {
    const series = this.#gauges.get(name);
    if (series === undefined) throw new Error(`unknown router gauge ${name}`);
    series.get(labels).value.n = value;
  }

  add(name: string, labels: Labels, delta: number): void {
    const series = this.#gauges.get(name);
    if (series === undefined) throw new Error(`unknown router gauge ${name}`);
    series.get(labels).value.n += delta;
  }

  observe(name: string, labels: Labels, seconds: number): void {
    const series = this.#histograms.get(name);
    if (series === undefined) throw new Error(`unknown router histogram ${name}`);
    series.get(labels).value.observe(seconds);
  }

  /** A counter's value (for stats and tests). */
  count(name: string, labels: Labels = {}): number {
    return (
      this.#counters
        .get(name)
        ?.all()
        .find((e) => JSON.stringify(e.labels) === JSON.stringify(labels))?.value.n ?? 0
    );
  }

  /** The exposition as the Rust exporter writes it; a metric with no series yet is left out, as there. */
  render(): string {
    const families: MetricFamily[] = [];
    for (const [name, help] of COUNTERS) {
      const samples = this.#counters
        .get(name)!
        .all()
        .map((e) => ({ labels: e.labels, value: e.value.n }));
      if (samples.length > 0) families.push({ name, help, type: 'counter', samples });
    }
    for (const [name, help] of GAUGES) {
      const samples = this.#gauges
        .get(name)!
        .all()
        .map((e) => ({ labels: e.labels, value: e.value.n }));
      if (samples.length > 0) families.push({ name, help, type: 'gauge', samples });
    }
    for (const [name, help] of HISTOGRAMS) {
      const samples = this.#histograms
        .get(name)!
        .all()
        .map((e) => ({ labels: e.labels, histogram: e.value }));
      if (samples.length > 0) families.push({ name, help, type: 'histogram', samples });
    }
    return renderExposition(families, 'rust');
  }
}

// The scraper on fake time: a drift-free grid, no overlapping scrapes of one target, down targets recorded
// and retried, burst sampling and its fallback, and what a scrape keeps.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/watchdog/index.js';
import { metricsUrl, Scraper, SeriesSelector, type FetchText } from '../../src/monitor/index.js';
import type { BurstEvent, ScrapeEvent } from '../../src/types/index.js';
import { DEFAULT_MONITOR_COUNTERS, DEFAULT_MONITOR_GAUGES } from '../../src/config/index.js';
import { PREFILL_TP2 } from './fixtures.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Advances fake time in `stepMs` steps, letting promise callbacks run between steps. */
async function advance(clock: FakeClock, ms: number, stepMs = 10): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    clock.advance(Math.min(stepMs, ms - done));
    await flush();
    await flush();
  }
}

interface Harness {
  clock: FakeClock;
  scraper: Scraper;
  scrapes: ScrapeEvent[];
  bursts: BurstEvent[];
  /** Scrapes in progress per target, and the most ever at once. */
  maxConcurrent: Map<string, number>;
}

function harness(options: { intervalMs?: number; latencyMs?: (url: string, n: number) => number; fail?: (url: string) => Error | number | null; body?: string; targets?: string[] } = {}): Harness {
  const clock = new FakeClock();
  const scrapes: ScrapeEvent[] = [];
  const bursts: BurstEvent[] = [];
  const current = new Map<string, number>();
  const maxConcurrent = new Map<string, number>();
  const calls = new Map<string, number>();
  const fetch: FetchText = (url, timeoutMs) =>
    new Promise((resolve, reject) => {
      const n = (calls.get(url) ?? 0) + 1;
      calls.set(url, n);
      current.set(url, (current.get(url) ?? 0) + 1);
      maxConcurrent.set(url, Math.max(maxConcurrent.get(url) ?? 0, current.get(url)!));
      const latency = Math.min(options.latencyMs?.(url, n) ?? 5, timeoutMs);
      clock.setTimer(() => {
        current.set(url, current.get(url)! - 1);
        const failure = options.fail?.(url) ?? null;
        if (failure instanceof Error) reject(failure);
        else if (typeof failure === 'number') resolve({ status: failure, body: 'nope' });
        else resolve({ status: 200, body: options.body ?? PREFILL_TP2 });
      }, latency);
    });
  const scraper = new Scraper({
    targets: (options.targets ?? ['prefill']).map((name) => ({ name, url: `http://${name}:30000` })),
    intervalMs: options.intervalMs ?? 1000,
    timeoutMs: 2000,
    burstIntervalMs: 100,
    burstDurationMs: 1500,
    selector: new SeriesSelector(DEFAULT_MONITOR_GAUGES, DEFAULT_MONITOR_COUNTERS),
    clock,
    runStartMs: 0,
    fetch,
    emit: (e) => (e.kind === 'scrape' ? scrapes.push(e) : bursts.push(e)),
    wallNow: () => 1_700_000_000_000 + clock.now(),
  });
  return { clock, scraper, scrapes, bursts, maxConcurrent };
}

/** Stops the scraper while fake time moves on, so a scrape under way can end. */
async function stopAll(h: Harness): Promise<void> {
  const stopped = h.scraper.stop();
  await advance(h.clock, 2500, 50);
  await stopped;
}

const times = (events: ScrapeEvent[], target = 'prefill'): number[] => events.filter((e) => e.target === target).map((e) => e.run_ms);

describe('scraper', () => {
  it('scrapes at once and then on a drift-free grid of interval_ms, whatever each scrape takes', async () => {
    const h = harness({ intervalMs: 1000, latencyMs: (_, n) => (n % 2 === 0 ? 170 : 30) });
    h.scraper.start();
    await advance(h.clock, 5200);
    assert.deepEqual(times(h.scrapes), [0, 1000, 2000, 3000, 4000, 5000]);
    assert.deepEqual(
      h.scrapes.map((e) => e.duration_ms),
      [30, 170, 30, 170, 30, 170],
    );
    await stopAll(h);
  });

  it('never overlaps two scrapes of one target: a scrape slower than the interval skips the ticks it covers', async () => {
    const h = harness({ intervalMs: 100, latencyMs: () => 250 });
    h.scraper.start();
    await advance(h.clock, 1000);
    assert.equal(h.maxConcurrent.get('http://prefill:30000/metrics'), 1);
    assert.deepEqual(times(h.scrapes), [0, 300, 600]);
    await stopAll(h);
  });

  it('a down target is recorded with its error and duration and tried again; the other target is unaffected', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:30000'), { code: 'ECONNREFUSED' });
    const h = harness({
      targets: ['prefill', 'decode'],
      fail: (url) => (url.includes('decode') ? new TypeError('fetch failed', { cause: refused }) : null),
      latencyMs: (url) => (url.includes('decode') ? 40 : 5),
    });
    h.scraper.start();
    await advance(h.clock, 3050);
    const decode = h.scrapes.filter((e) => e.target === 'decode');
    assert.equal(decode.length, 4, 'retried every interval');
    assert.ok(decode.every((e) => !e.ok && e.samples.length === 0 && e.duration_ms === 40));
    assert.equal(decode[0]!.error, 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.9:30000');
    assert.equal(decode[0]!.url, 'http://decode:30000/metrics');
    const prefill = h.scrapes.filter((e) => e.target === 'prefill');
    assert.deepEqual(times(prefill), [0, 1000, 2000, 3000]);
    assert.ok(prefill.every((e) => e.ok && e.error === null));
    await stopAll(h);
  });

  it('keeps the selected gauges and counters with every label, typed, and drops the rest', async () => {
    const h = harness();
    h.scraper.start();
    await advance(h.clock, 50);
    const [e] = h.scrapes;
    assert.ok(e?.ok);
    const names = [...new Set(e.samples.map((s) => s.name))].sort();
    assert.deepEqual(names, [
      'sglang:gen_throughput',
      'sglang:generation_tokens_total',
      'sglang:num_bootstrap_failed_reqs_total',
      'sglang:num_prefill_bootstrap_queue_reqs',
      'sglang:num_prefill_inflight_queue_reqs',
      'sglang:num_queue_reqs',
      'sglang:num_requests_total',
      'sglang:num_running_reqs',
      'sglang:prompt_tokens_total',
      'sglang:token_usage',
    ]);
    const inflight = e.samples.filter((s) => s.name === 'sglang:num_prefill_inflight_queue_reqs');
    assert.deepEqual(
      inflight.map((s) => s.labels.tp_rank),
      ['0', '1'],
    );
    assert.equal(inflight[0]!.labels.pid, '41822');
    assert.equal(inflight[0]!.type, 'gauge');
    assert.equal(e.samples.find((s) => s.name === 'sglang:num_requests_total')?.type, 'counter');
    assert.equal(e.t, new Date(1_700_000_000_000).toISOString());
    await stopAll(h);
  });

  it('an HTTP error, a body that is not an exposition, and a partly malformed one are told apart', async () => {
    for (const [fail, body, ok, error] of [
      [503, undefined, false, /^HTTP 503$/],
      [null, '<html>\n<body>oops</body>\n</html>\n', false, /^not a Prometheus exposition: 3 of 3 lines unreadable \(line 1: /],
      [null, `${PREFILL_TP2}sglang:num_running_reqs{a="1" 2\n`, true, /^1 malformed line skipped \(line 42: expected "," or "}"/],
    ] as const) {
      const h = harness({ fail: () => fail, ...(body === undefined ? {} : { body }) });
      h.scraper.start();
      await advance(h.clock, 50);
      assert.equal(h.scrapes[0]?.ok, ok, String(body));
      assert.match(h.scrapes[0]?.error ?? '', error);
      await stopAll(h);
    }
  });

  it('a burst scrapes at once and every 100 ms for its duration, a second trigger extends it, then the interval resumes', async () => {
    const h = harness({ intervalMs: 1000 });
    h.scraper.start();
    await advance(h.clock, 1250);
    h.scraper.burst('hang', { agent: 2, conversation: 'a2-c1', round: 4 });
    await advance(h.clock, 500);
    h.scraper.burst('hang', { agent: 3, conversation: 'a3-c1', round: 4 });
    await advance(h.clock, 3000);
    const ts = times(h.scrapes);
    const burst = h.scrapes.filter((e) => e.burst).map((e) => e.run_ms);
    // 1250 … 1750 + 1500 = 3250 (exclusive), every 100 ms.
    assert.deepEqual(
      burst,
      Array.from({ length: 20 }, (_, i) => 1250 + i * 100),
    );
    assert.deepEqual(
      ts.filter((t) => t < 1250),
      [0, 1000],
    );
    assert.deepEqual(
      ts.filter((t) => t > 3150),
      [4000],
      'back on the 1000 ms grid',
    );
    assert.deepEqual(
      h.bursts.map((b) => [b.state, b.run_ms, b.until_run_ms]),
      [
        ['start', 1250, 2750],
        ['extend', 1750, 3250],
        ['end', 3250, 3250],
      ],
    );
    assert.deepEqual(h.bursts[0]!.trigger, { agent: 2, conversation: 'a2-c1', round: 4 });
    assert.equal(h.bursts[0]!.interval_ms, 100);
    await stopAll(h);
  });

  it('stop() waits for a scrape under way (so it is recorded) and schedules nothing more', async () => {
    const h = harness({ latencyMs: () => 300 });
    h.scraper.start();
    await advance(h.clock, 100);
    const stopped = h.scraper.stop();
    await advance(h.clock, 300);
    await stopped;
    await advance(h.clock, 3000);
    assert.deepEqual(times(h.scrapes), [0]);
    assert.equal(h.clock.pendingTimers, 0);
  });

  it('a URL with no path gets /metrics; one with a path is kept', () => {
    assert.equal(metricsUrl('http://10.0.0.5:30000'), 'http://10.0.0.5:30000/metrics');
    assert.equal(metricsUrl('http://router:29000/'), 'http://router:29000/metrics');
    assert.equal(metricsUrl('https://gw/custom/metrics?x=1'), 'https://gw/custom/metrics?x=1');
  });
});

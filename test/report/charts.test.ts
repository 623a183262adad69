import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder } from '../../src/analysis/index.js';
import { canaryCharts, chartPoints, envelope, GaugeSeriesBuilder, latencyCharts, timeCharts, verdictTitle, clientCharts } from '../../src/report/index.js';
import type { CanaryEvent, GaugeVerdict } from '../../src/types/index.js';
import { gauge, hangRecord, record, scrape } from './fixtures.js';

function verdict(over: Partial<GaugeVerdict>): GaugeVerdict {
  return {
    target: 'engine',
    name: 'sglang:num_running_reqs',
    labels: {},
    verdict: 'rotating',
    samples: 10,
    window_s: 10,
    longest_nonzero_s: 2,
    dips: 3,
    last_value: 1,
    needed_s: null,
    evidence: [],
    ...over,
  };
}

test('envelope keeps a one-sample dip and spike of a long series within the point budget', () => {
  const n = 100_000;
  const x = Array.from({ length: n }, (_, i) => i);
  const y: (number | null)[] = x.map(() => 1);
  y[31_337] = 0;
  y[77_001] = 9;
  const out = envelope(x, [y], 1000);
  assert.equal(out.reduced, true);
  assert.ok(out.x.length <= 1000, String(out.x.length));
  assert.equal(Math.min(...out.ys[0]!.filter((v): v is number => v !== null)), 0, 'the dip survives');
  assert.equal(Math.max(...out.ys[0]!.filter((v): v is number => v !== null)), 9, 'the spike survives');
  assert.ok(
    out.x.every((v, i) => i === 0 || v >= out.x[i - 1]!),
    'x stays in order',
  );
  const small = envelope([1, 2, 3], [[1, null, 3]]);
  assert.deepEqual(small, { x: [1, 2, 3], ys: [[1, null, 3]], reduced: false });
});

test('gauge series: one chart per target × family, a series per label set, gaps for failed scrapes and late label sets', () => {
  const g = new GaugeSeriesBuilder();
  g.add(scrape(0, [gauge('sglang:num_running_reqs', 1, { gpu: '0' })]));
  g.add(scrape(1000, [gauge('sglang:num_running_reqs', 2, { gpu: '0' }), gauge('sglang:num_running_reqs', 5, { gpu: '1' })]));
  g.add(scrape(2000, [], { ok: false, error: 'timeout after 1000 ms' }));
  g.add(scrape(3000, [gauge('sglang:num_running_reqs', 0, { gpu: '0' }), gauge('sglang:num_running_reqs', 4, { gpu: '1' })]));
  g.add(scrape(500, [gauge('sglang:num_queue_reqs', 3)], { target: 'router', url: 'http://r/metrics' }));
  const charts = g.charts([verdict({ labels: { gpu: '0' } }), verdict({ labels: { gpu: '1' }, verdict: 'pinned' })], [{ run_s: 2.5, round: 3, label: 'hang a0 r3 mid_stream' }]);
  assert.deepEqual(
    charts.map((c) => c.id),
    ['gauge-engine-sglang_num_running_reqs', 'gauge-router-sglang_num_queue_reqs'],
  );
  const c = charts[0]!;
  assert.deepEqual(c.x, [0, 1, 2, 3]);
  assert.deepEqual(
    c.series.map((s) => s.values),
    [
      [1, 2, null, 0],
      [null, 5, null, 4],
    ],
  );
  assert.deepEqual(
    c.series.map((s) => s.label),
    ['{gpu="0"} · rotating', '{gpu="1"} · pinned'],
  );
  assert.equal(c.title, 'engine · sglang:num_running_reqs — pinned ×1 · rotating ×1');
  assert.deepEqual(c.markers, [{ x: 2.5, label: 'hang a0 r3 mid_stream' }]);
  assert.match(c.note ?? '', /1 of 4 scrapes of engine failed/);
  assert.equal(chartPoints(c), 5);
  assert.equal(charts[1]!.title, 'router · sglang:num_queue_reqs — no verdict');
  assert.deepEqual(
    g.health().map((h) => [h.target, h.scrapes, h.failed, h.first_error]),
    [
      ['engine', 4, 1, 'timeout after 1000 ms'],
      ['router', 1, 0, null],
    ],
  );
});

test('labels every series shares are said once in the note; legends show what differs; a counter without verdict is a flow counter', () => {
  const g = new GaugeSeriesBuilder();
  g.add(
    scrape(0, [
      gauge('sglang:num_running_reqs', 1, { model_name: 'm', dp: '0' }),
      gauge('sglang:num_running_reqs', 2, { model_name: 'm', dp: '1' }),
      { ...gauge('sglang:num_requests_total', 1, { model_name: 'm' }), type: 'counter' },
    ]),
  );
  g.add(scrape(1000, [gauge('sglang:num_running_reqs', 1, { model_name: 'm', dp: '0' }), { ...gauge('sglang:num_requests_total', 3, { model_name: 'm' }), type: 'counter' }]));
  const [running, requests] = g.charts([verdict({ labels: { model_name: 'm', dp: '0' } })], []);
  assert.deepEqual(
    running!.series.map((s) => s.label),
    ['{dp="0"} · rotating', '{dp="1"}'],
  );
  assert.equal(running!.note, 'model_name="m"');
  assert.equal(requests!.title, 'engine · sglang:num_requests_total (rate/s) — flow counter');
  assert.deepEqual(
    requests!.series.map((s) => s.label),
    ['per s'],
  );
});

test('a verdict named without the sglang: prefix still matches its series', () => {
  const g = new GaugeSeriesBuilder();
  g.add(scrape(0, [gauge('sglang:num_prefill_inflight_queue_reqs', 1)]));
  const [c] = g.charts([verdict({ name: 'num_prefill_inflight_queue_reqs', verdict: 'pinned' })], []);
  assert.match(c!.title, /— pinned$/);
});

test('counters are drawn as a per-second rate, a reset leaves a gap', () => {
  const g = new GaugeSeriesBuilder();
  [0, 10, 30, 5, 15].forEach((v, i) => g.add(scrape(i * 2000, [gauge('sglang:num_requests_total', v)])));
  const [c] = g.charts([], []);
  assert.match(c!.title, /\(rate\/s\)/);
  assert.deepEqual(c!.series[0]!.values, [null, 5, 10, null, 5]);
});

test('the exposition TYPE decides what is a counter; the _total suffix only when a file has no type', () => {
  const g = new GaugeSeriesBuilder();
  [0, 4, 8].forEach((v, i) =>
    g.add(
      scrape(i * 1000, [
        { ...gauge('sglang:cache_hit_tokens', v), type: 'counter' },
        { ...gauge('odd_total', v), type: 'gauge' },
      ]),
    ),
  );
  const charts = g.charts([], []);
  assert.deepEqual(
    charts.map((c) => [c.id, c.series[0]!.values]),
    [
      ['gauge-engine-odd_total', [0, 4, 8]],
      ['gauge-engine-sglang_cache_hit_tokens', [null, 4, 4]],
    ],
  );
});

test('gauge charts come per target, gauges before counters, the worst verdict first', () => {
  const g = new GaugeSeriesBuilder();
  g.add(scrape(0, [gauge('a_gauge', 1), gauge('b_gauge', 1), { ...gauge('c_total', 1), type: 'counter' }, gauge('d_gauge', 0)]));
  g.add(scrape(1000, [gauge('a_gauge', 1), gauge('b_gauge', 1), { ...gauge('c_total', 2), type: 'counter' }, gauge('d_gauge', 0)]));
  g.add(scrape(500, [gauge('z', 1)], { target: 'router' }));
  const ids = g.charts([verdict({ name: 'b_gauge', verdict: 'pinned' }), verdict({ name: 'a_gauge', verdict: 'rotating' }), verdict({ name: 'd_gauge', verdict: 'idle' })], []).map((c) => c.id);
  assert.deepEqual(ids, ['gauge-engine-b_gauge', 'gauge-engine-a_gauge', 'gauge-engine-d_gauge', 'gauge-engine-c_total', 'gauge-router-z']);
});

test('a family whose scrapes never carried a value gets no chart', () => {
  const g = new GaugeSeriesBuilder();
  g.add(scrape(0, [], { ok: false, error: 'connection refused' }));
  assert.deepEqual(g.charts([], []), []);
  assert.equal(g.health()[0]!.failed, 1);
});

test('verdict titles: one verdict, a mix, none', () => {
  assert.equal(verdictTitle([verdict({}), verdict({})]), 'rotating');
  assert.equal(verdictTitle([verdict({ verdict: 'stale' }), null]), 'stale ×1 · no verdict for the rest');
  assert.equal(verdictTitle([null]), 'no verdict');
});

test('latency by round: p50/p90/p99 lines over the round number, null where a round has no ok request, a marker on hung rounds', () => {
  const b = new SummaryBuilder({ itlFromRecords: true });
  b.add(record({ round: 1, ttft_ms: 10 }));
  b.add(record({ round: 1, ttft_ms: 30 }));
  b.add(hangRecord({ round: 2 }));
  b.add(record({ round: 3, ttft_ms: 50 }));
  const s = b.build({ name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 5, target: 't', path: 'direct', labels: {} });
  const charts = latencyCharts(s);
  assert.deepEqual(
    charts.map((c) => c.id),
    ['latency-ttft', 'latency-itl', 'latency-e2e'],
  );
  const ttft = charts[0]!;
  assert.deepEqual(ttft.x, [1, 2, 3]);
  assert.deepEqual(
    ttft.series.map((x) => x.label),
    ['p50', 'p90', 'p99'],
  );
  assert.equal(ttft.series[0]!.values[1], null, 'round 2 only hung');
  assert.ok(Math.abs(ttft.series[2]!.values[2]! - 50) < 1);
  assert.deepEqual(ttft.markers, [{ x: 2, label: '1 hung' }]);
});

test('throughput over time: the last window is measured over the time the run covered, not its nominal length', () => {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 10 });
  b.add(record({ run_ms: 1000, ttft_ms: 100, e2e_ms: 1100, completion_tokens: 101 }));
  b.add(record({ run_ms: 12_000, ttft_ms: 100, e2e_ms: 1100, completion_tokens: 101 }));
  const s = b.build({ name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 15, target: 't', path: 'direct', labels: {} });
  const [tp] = timeCharts(s, []);
  assert.deepEqual(tp!.x, [10, 15]);
  assert.deepEqual(tp!.series[0]!.values, [10.1, 20.2], 'tokens/s over 10 s, then over the 5 s the run covered');
  // …and drawn as partial, with the reason said under the chart.
  assert.deepEqual(tp!.partial, { from_x: 10, to_x: 15, covered_s: 5, window_s: 10 });
  assert.match(tp!.note ?? '', /the last window is partial \(the run ended 5 s into it\)/);
  // A run that ended on a window boundary has no partial window.
  const whole = timeCharts({ ...s, run: { ...s.run, wall_s: 20 } }, []);
  assert.ok(whole.every((c) => (c.partial ?? null) === null));
  assert.equal(timeCharts({ ...s, windows: [] }, []).length, 0);
  // A long soak's windows stay within the point budget.
  const many = Array.from({ length: 30_000 }, (_, i) => ({ ...s.windows[0]!, start_s: i * 10, end_s: (i + 1) * 10 }));
  const [big] = timeCharts({ ...s, windows: many, run: { ...s.run, wall_s: 300_000 } }, []);
  assert.ok(big!.x.length <= 2400, String(big!.x.length));
  assert.match(big!.note ?? '', /30000 windows reduced/);
});

test('client charts: loop delay and utilisation, requests in flight; none without samples', () => {
  const samples = [0, 1000, 2000].map((ms, i) => ({
    kind: 'client_sample' as const,
    t: '',
    run_ms: ms,
    window_ms: 1000,
    loop_delay_p99_ms: 2 + i,
    loop_delay_max_ms: 5,
    loop_utilization: 0.1,
    in_flight: i,
    rss_bytes: 1,
  }));
  const charts = clientCharts(samples, []);
  assert.deepEqual(
    charts.map((c) => c.id),
    ['client-loop', 'in-flight'],
  );
  assert.deepEqual(charts[1]!.series[0]!.values, [0, 1, 2]);
  assert.deepEqual(clientCharts([], []), []);
});

function canary(leg: CanaryEvent['leg'], runMs: number, latencyMs: number, ok = true): CanaryEvent {
  return {
    kind: 'canary',
    t: '',
    run_ms: runMs,
    leg,
    path: leg === 'direct' ? 'direct' : 'hop',
    url: 'u',
    ok,
    status: ok ? 'ok' : 'hang',
    latency_ms: latencyMs,
    ttft_ms: null,
    http_status: ok ? 200 : null,
    error_class: null,
    hang_phase: ok ? null : 'first_token',
    connection_nth: 1,
  };
}

test("canaries: each leg is its own line bridged across the other leg's times, every point dotted, failures as dots of their own", () => {
  // Legs that interleave (each leg's own schedule): 60 canaries each, one proxied canary hung.
  const events: CanaryEvent[] = [];
  for (let i = 0; i < 60; i += 1) {
    events.push(canary('proxied', i * 1000, 40 + (i % 3), i !== 30));
    events.push(canary('direct', i * 1000 + 500, 20));
  }
  const [c] = canaryCharts(events, []);
  assert.ok(c);
  assert.equal(c.x.length, 120);
  assert.deepEqual(
    c.series.map((s) => [s.label, s.gaps ?? 'gap', s.style ?? 'line', s.dots ?? false]),
    [
      ['proxied ms', 'bridge', 'line', true],
      ['direct ms', 'bridge', 'line', true],
      ['proxied failed (ms to the failure)', 'gap', 'points', false],
    ],
  );
  const [proxied, direct, failed] = c.series;
  assert.equal(proxied!.values.filter((v) => v !== null).length, 59, 'every ok proxied canary is a point');
  assert.equal(direct!.values.filter((v) => v !== null).length, 60);
  assert.equal(proxied!.values[1], null, "the direct leg's time is blank in the proxied series (bridged when drawn)");
  assert.deepEqual(
    failed!.values.filter((v) => v !== null),
    [40],
    'the hung canary at the time it took to fail',
  );
  assert.match(c.note ?? '', /1 failed canary drawn as dots/);
  // Legs on one shared grid: one x per time, both legs' values on it.
  const grid = canaryCharts([canary('proxied', 0, 30), canary('direct', 0, 10), canary('proxied', 1000, 31), canary('direct', 1000, 11)], []);
  assert.deepEqual(grid[0]!.x, [0, 1]);
  assert.deepEqual(
    grid[0]!.series.map((s) => s.values),
    [
      [30, 31],
      [10, 11],
    ],
  );
  assert.deepEqual(canaryCharts([], []), []);
  // A canary due but not sent (the leg's canaries all still out) is no failure time: counted, not drawn.
  const notSent = { ...canary('proxied', 2000, 0, false), status: 'error' as const, hang_phase: null, error_class: 'not_sent' };
  const [withGap] = canaryCharts([canary('proxied', 0, 30), canary('proxied', 1000, 31), notSent], []);
  assert.deepEqual(
    withGap!.series.map((s) => s.label),
    ['proxied ms'],
  );
  assert.match(withGap!.note ?? '', /^1 not sent \(every canary of the leg was still out\), not drawn$/);
});

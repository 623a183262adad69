import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareArms, comparisonCharts, formatComparison, comparisonHtml, workloadHash, identityDifferences } from '../../src/compare/index.js';
import { DifferentWorkloadsError } from '../../src/errors.js';
import { SeededRandom } from '../../src/compare/stats.js';
import { ar1, run, window } from './helpers.js';

/** Runs that alternated as an ab runs them (A B, B A, A B …): start times that pair them. */
function startOf(arm: 'a' | 'b', i: number): string {
  const slot = 2 * i + ((arm === 'a') === (i % 2 === 0) ? 0 : 1);
  return new Date(Date.UTC(2026, 11, 5, 10, slot)).toISOString();
}

const base = { name: 'w', window_s: 1, labels: { arm: 'a' }, target: { url: 'http://a:1', model: 'm' }, agents: { count: 8, rounds: 10 }, engine: { decode_speedup: 1 }, thresholds: { hangs: 0 } };

test('the workload identity ignores name, labels, engine, target url and thresholds, but not the load', () => {
  const other = { ...base, name: 'x', labels: { arm: 'b' }, target: { url: 'http://b:2', model: 'm' }, engine: { decode_speedup: 1.128 }, thresholds: { hangs: 3 } };
  assert.equal(workloadHash(other), workloadHash(base));
  assert.notEqual(workloadHash({ ...base, agents: { count: 16, rounds: 10 } }), workloadHash(base));
  assert.notEqual(workloadHash({ ...base, target: { url: 'http://a:1', model: 'other' } }), workloadHash(base));
  assert.deepEqual(identityDifferences(base, { ...base, agents: { count: 16, rounds: 10 }, sweep: { agents: [64] } }), ['agents.count: 8 vs 16', 'sweep: (absent) vs {"agents":[64]}']);
});

test('target.extra_body is part of the load (thinking on or off) when set; headers and an empty extra_body are not', () => {
  const thinking = { ...base, target: { ...base.target, extra_body: { chat_template_kwargs: { thinking: true } } } };
  assert.notEqual(workloadHash(thinking), workloadHash(base));
  assert.deepEqual(identityDifferences(thinking, { ...base, target: { ...base.target, extra_body: { chat_template_kwargs: { thinking: false } } } }), [
    'target.extra_body.chat_template_kwargs.thinking: true vs false',
  ]);
  // A run recorded before extra_body existed is the same workload as one with none set.
  assert.equal(workloadHash({ ...base, target: { ...base.target, extra_body: {}, headers: { 'X-Session-Id': 's' } } }), workloadHash(base));
});

test('runs of different workloads are refused with where they differ (exit 2), and compared with --force', () => {
  const rng = new SeededRandom(1);
  const a = run('a', ar1(rng, 10, 1000, 0.02, 0), { workload: base });
  const b = run('b', ar1(rng, 10, 1000, 0.02, 0), { workload: { ...base, agents: { count: 16, rounds: 10 } } });
  assert.throws(
    () => compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [b] }),
    (e: unknown) => e instanceof DifferentWorkloadsError && e.exitCode === 2 && /agents\.count: 8 vs 16/.test(e.message) && /--force/.test(e.message),
  );
  const forced = compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [b] }, { force: true });
  assert.equal(forced.forced, true);
  assert.deepEqual(forced.differences, ['agents.count: 8 vs 16']);
  assert.match(formatComparison(forced), /--force: the workloads differ \(agents\.count: 8 vs 16\)/);
  // Two repeats of one arm must be one workload too.
  assert.throws(() => compareArms({ name: 'A', runs: [a, b] }, { name: 'B', runs: [a] }), DifferentWorkloadsError);
});

test("only steady windows count for a run's throughput: low edge windows do not drag its value", () => {
  const series = [100, 1000, 1000, 1000, 1000, 1000, 1000, 50];
  const a = run('a', series, { edges: true });
  const b = run(
    'b',
    series.map((v) => v * 1.1),
    { edges: true },
  );
  const p = compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [b] }).phases[0]!;
  assert.equal(p.windowsA, 6);
  const tput = p.rows.find((r) => r.figure === 'decode_tokens_per_s')!;
  assert.equal(tput.a, 1000);
  assert.deepEqual(tput.values, { a: [1000], b: [1100] });
  assert.ok(Math.abs(tput.delta! - 10) < 1e-6);
});

test('one run per arm gets no verdict on any figure: it says so, and that 3 alternated pairs would give one', () => {
  const rng = new SeededRandom(2);
  const c = compareArms(
    { name: 'A', runs: [run('a', ar1(rng, 20, 1000, 0.01, 0), { startedAt: startOf('a', 0) })] },
    { name: 'B', runs: [run('b', ar1(rng, 20, 1300, 0.01, 0), { startedAt: startOf('b', 0) })] },
  );
  assert.equal(c.method, 'paired');
  for (const row of c.phases[0]!.rows) assert.equal(row.verdict, 'insufficient data', row.label);
  const tput = c.phases[0]!.rows[0]!;
  assert.ok(tput.delta! > 20 && tput.low === null && tput.a! > 900 && tput.b! > 1200, 'the difference is shown, with no interval and no verdict');
  assert.match(tput.text, /1 pair with this figure: no verdict across runs; at least 3 alternated pairs \(A B, B A, A B\) give one/);
  assert.match(formatComparison(c), /^decode tok\/s .* insufficient data \(~2 more\)$/m);
});

test('latencies 20% lower in B are found better, errors only in B are worse in points, and the whole-phase counts keep every request', () => {
  const rng = new SeededRandom(5);
  const n = 4;
  const a = Array.from({ length: n }, (_, i) => run(`a${i}`, ar1(rng, 16, 1000, 0.02, 0), { requests: 20, startedAt: startOf('a', i) }));
  const b = Array.from({ length: n }, (_, i) => run(`b${i}`, ar1(rng, 16, 1000, 0.02, 0), { latencyScale: 0.8, requests: 20, startedAt: startOf('b', i) }));
  // B: every window has 1 error among its 20 requests (5 points).
  for (const r of b) r.phases.get('main')!.windows.forEach((w, i) => Object.assign(w, window(i, w.tokensPerS, { requests: 20, errors: 1, latencyScale: 0.8, rng: new SeededRandom(i) })));
  const c = compareArms({ name: 'A', runs: a }, { name: 'B', runs: b });
  assert.equal(c.method, 'paired');
  assert.deepEqual(c.pairs, [
    [0, 0],
    [1, 1],
    [2, 2],
    [3, 3],
  ]);
  const p = c.phases[0]!;
  const row = (f: string) => p.rows.find((r) => r.figure === f)!;
  for (const f of ['ttft_p50_ms', 'ttfc_p50_ms', 'itl_p50_ms', 'tpot_p50_ms', 'e2e_p50_ms']) {
    assert.equal(row(f).verdict, 'better', f);
    assert.ok(Math.abs(row(f).delta! + 20) < 2, `${f} ${row(f).delta}`);
  }
  assert.equal(row('error_rate').verdict, 'worse');
  assert.ok(Math.abs(row('error_rate').delta! - 5) < 1e-6, 'B − A in percentage points');
  assert.deepEqual(p.countsB, { requests: 4 * 320, errors: 4 * 16, hangs: 0 });
  assert.equal(row('decode_tokens_per_s').verdict, 'equivalent', row('decode_tokens_per_s').text);
  // 16 windows × 19 or 20 completed requests is under 500 a run: no p99, and the note says why.
  assert.equal(row('ttft_p99_ms').verdict, 'insufficient data');
  assert.ok(
    p.notes.some((n) =>
      /^ttft p99, ttfc p99, tpot p99, e2e p99 need 500 requests in a run's steady windows \(these runs had \d+-\d+\): a phase of ≥ \d+ s \(sweep\.phase_duration; this one ran 16 s/.test(n),
    ),
    p.notes.join(' | '),
  );
});

test('runs that did not alternate are compared across the arms (Welch); a failed run counts as all errors and no latency', () => {
  const rng = new SeededRandom(6);
  const a = Array.from({ length: 4 }, (_, i) => run(`a${i}`, ar1(rng, 16, 1000, 0.01, 0), { requests: 20 }));
  const b = Array.from({ length: 3 }, (_, i) => run(`b${i}`, ar1(rng, 16, 1000, 0.01, 0), { requests: 20 }));
  const c = compareArms({ name: 'A', runs: a }, { name: 'B', runs: b });
  assert.equal(c.method, 'welch');
  assert.match(formatComparison(c), /Welch's across runs \(they did not alternate A B, B A …\)/);
  const tput = c.phases[0]!.rows[0]!;
  assert.equal(tput.verdict, 'equivalent', tput.text);
  assert.match(tput.text, /after 3 runs per arm/);
  b[2] = { ...b[2]!, status: 'failed' };
  const failed = compareArms({ name: 'A', runs: a }, { name: 'B', runs: b });
  const errors = failed.phases[0]!.rows.find((r) => r.figure === 'error_rate')!;
  assert.deepEqual(errors.values.b, [0, 0, 100]);
  assert.deepEqual(failed.phases[0]!.rows[0]!.values.b.at(-1), null);
});

test('too few steady windows are noted as within-run only, and phases in one arm only are listed, not compared', () => {
  const a = run('a', [1000, 1000, 1000], { phase: 'c64' });
  const b = run('b', [1100, 1100, 1100], { phase: 'c64' });
  b.phases.set('c96', { name: 'c96', windows: [window(0, 5)], warmupRequests: 0, arrivals: null });
  const c = compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [b] });
  assert.deepEqual(
    c.phases.map((p) => p.phase),
    ['c64'],
  );
  assert.deepEqual(c.unmatched, ['c96']);
  assert.equal(c.phases[0]!.rows[0]!.verdict, 'insufficient data');
  assert.match(c.phases[0]!.notes[0]!, /only 3 and 3 steady windows/);
  assert.match(formatComparison(c), /phases in only one arm \(not compared\): c96/);
  assert.match(formatComparison(c), /within runs only \(not a verdict\): steady windows A 3, B 3/);
});

test('the table and compare.html show every figure with delta, interval and verdict; the page is self-contained', () => {
  const rng = new SeededRandom(8);
  const runs = (arm: 'a' | 'b', level: number) => Array.from({ length: 3 }, (_, i) => run(`${arm}${i}`, ar1(rng, 20, level, 0.01, 0), { startedAt: startOf(arm, i) }));
  const c = compareArms({ name: 'base<1>', runs: runs('a', 1000) }, { name: 'fast', runs: runs('b', 1128) });
  const text = formatComparison(c);
  assert.match(text, /runs as the unit .* 3 runs of A, 3 of B; paired: 3 pairs of runs that alternated/);
  assert.match(text, /^figure +A +B +delta +95% interval +verdict$/m);
  assert.match(text, /^decode tok\/s +[\d,.]+ +1,1\d\d +\+1\d\.\d% +\+1\d\.\d% … \+1\d\.\d% +better$/m);
  for (const label of ['ttft p50 ms', 'ttft p99 ms', 'itl p50 ms', 'itl p99 ms', 'e2e p50 ms', 'e2e p99 ms', 'errors+hangs %']) assert.match(text, new RegExp(`^${label.replace('+', '\\+')} `, 'm'));
  const html = comparisonHtml([c]);
  assert.match(html, /^<!doctype html>/);
  // Self-contained: uPlot and the data inline, a CSP allowing no request, nothing fetched.
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">/);
  assert.doesNotMatch(html, /<link\b|<script[^>]+src=|@import|url\(\s*['"]?https?:/i);
  assert.match(html, /base&lt;1&gt;/, 'names are escaped');
  assert.match(html, /<td class="v better">better<\/td>/);
});

test("compare.html charts: a forest plot per kind of delta, and with the arms at hand every run's time series", () => {
  const rng = new SeededRandom(9);
  const a = { name: 'base', runs: [run('a1', ar1(rng, 20, 1000, 0.01, 0)), run('a2', ar1(rng, 20, 1000, 0.01, 0)), run('a3', ar1(rng, 20, 1000, 0.01, 0))] };
  const b = { name: 'fast', runs: [run('b1', ar1(rng, 12, 1128, 0.01, 0)), run('b2', ar1(rng, 12, 1128, 0.01, 0)), run('b3', ar1(rng, 12, 1128, 0.01, 0))] };
  const c = compareArms(a, b);
  const [phase] = comparisonCharts(c, 0, { a, b });
  assert.ok(phase);
  // Units never mix on one axis: % of A for the relative figures, points for the error rate.
  assert.deepEqual(
    phase.forests.map((f) => [f.id, f.unit, f.rows.length]),
    [
      ['forest-0-main-relative', '%', 11],
      ['forest-0-main-absolute', ' pt', 1],
    ],
  );
  const tput = phase.forests[0]!.rows[0]!;
  const row = c.phases[0]!.rows[0]!;
  assert.deepEqual(tput, { label: 'decode tok/s', delta: row.delta, low: row.low, high: row.high, verdict: 'better' });
  assert.deepEqual(
    phase.series.map((s) => s.id),
    ['arms-0-main-tokens', 'arms-0-main-ttft', 'arms-0-main-e2e'],
  );
  const tokens = phase.series[0]!;
  assert.deepEqual(
    tokens.series.map((s) => s.label),
    ['A: base r1 (a1)', 'A: base r2 (a2)', 'A: base r3 (a3)', 'B: fast r1 (b1)', 'B: fast r2 (b2)', 'B: fast r3 (b3)'],
  );
  assert.equal(tokens.x.length, 20, 'one x per window end, runs aligned from their first window');
  assert.equal(tokens.series[3]!.values.filter((v) => v !== null).length, 12);
  assert.ok(tokens.series.every((s) => s.gaps === 'bridge' && s.color !== undefined));
  assert.ok(
    phase.series[1]!.series[0]!.values.every((v) => v !== null && v > 40 && v < 80),
    'TTFT p50 per window from its latencies',
  );
  // Without the arms (a comparison read back from compare.json): the forest plots only.
  assert.deepEqual(comparisonCharts(c, 0)[0]!.series, []);
  // The page carries every chart's element and its data.
  const html = comparisonHtml([c], { arms: [{ a, b }] });
  for (const id of ['forest-0-main-relative', 'forest-0-main-absolute', 'arms-0-main-tokens', 'arms-0-main-ttft', 'arms-0-main-e2e']) assert.equal(html.split(`data-chart="${id}"`).length - 1, 1, id);
});

test("an open-loop phase shows each arm's arrivals and start lag, and an arm that fell behind its arrivals is named in a note", () => {
  const arrivals = (lagP99: number, delayed: number, notStarted: number | null) => ({
    scheduled: 60,
    started: 60 - (notStarted ?? 0),
    delayed,
    not_started: notStarted,
    arrivals_per_s: 4,
    start_lag: { count: 60, p50_ms: lagP99 / 4, p90_ms: lagP99 / 2, p99_ms: lagP99, max_ms: lagP99, mean_ms: lagP99 / 4 },
    active_mean: 8,
    active_max: 16,
    lagging: lagP99 > 100,
  });
  const series = Array.from({ length: 20 }, () => 1000);
  const a = run('a', series, { arrivals: arrivals(12, 0, 0) });
  const b = run('b', series, { arrivals: arrivals(840, 14, 6) });
  const c = compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [b] });
  const p = c.phases[0]!;
  assert.deepEqual(p.arrivals, {
    a: { runs: 1, scheduled: 60, started: 60, delayed: 0, not_started: 0, start_lag_p99_ms: [12], lagging_runs: 0 },
    b: { runs: 1, scheduled: 60, started: 54, delayed: 14, not_started: 6, start_lag_p99_ms: [840], lagging_runs: 1 },
  });
  assert.ok(
    p.notes.some((n) => n.startsWith('B fell behind its arrivals (start lag p99 840 ms, 14 delayed; A start lag p99 12 ms, 0 delayed)')),
    p.notes.join('\n'),
  );
  const text = formatComparison(c);
  assert.match(text, /arrivals {6}A 60 due, 60 started \(0 delayed\), start lag p99 12\.00 ms · B 60 due, 54 started \(14 delayed, 6 never started\), start lag p99 840\.0 ms LAGGING/);
  assert.match(comparisonHtml([c]), /arrivals {6}A 60 due/);
  // Both arms kept up: no note; a closed-loop phase: no arrivals line.
  const even = compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [run('b2', series, { arrivals: arrivals(15, 0, 0) })] });
  assert.ok(!even.phases[0]!.notes.some((n) => n.includes('fell behind')));
  const closed = compareArms({ name: 'A', runs: [run('x', series)] }, { name: 'B', runs: [run('y', series)] });
  assert.equal(closed.phases[0]!.arrivals, undefined);
  assert.doesNotMatch(formatComparison(closed), /arrivals/);
});

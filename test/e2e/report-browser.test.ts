// report.html and compare.html in a real browser: headless Chromium opens a real run's report (and the
// comparison of two real runs) from file:// and must find every chart drawn with visible data, no console
// error and no request but the file itself. The same code path makes docs/report.png:
// `npm run docs:screenshot` (ROUNDLOAD_DOCS_SCREENSHOT=1).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { collectReportData, junitCases, renderJunit, renderReportHtml, type ReportData } from '../../src/report/index.js';
import { compareArms, comparisonHtml, loadRun, type ArmPair, type Comparison } from '../../src/compare/index.js';
import { writeComparisons } from '../../src/commands/compare.js';
import { readJsonl } from '../helpers/tmp.js';
import { CHROMIUM_PATH, chromiumAvailable, openReportBrowser, type ReportBrowser } from '../helpers/browser.js';
import { ROOT } from '../helpers/root.js';

const SCREENSHOT = process.env.ROUNDLOAD_DOCS_SCREENSHOT === '1' ? join(ROOT, 'docs', 'report.png') : undefined;
/** `ROUNDLOAD_E2E_SCREENSHOTS=1` writes the pages' screenshots to test/e2e/screenshots/ (kept in the repository,
 * to look at what the checks pass). */
function e2eShot(name: string): { screenshot: string } | Record<string, never> {
  if (process.env.ROUNDLOAD_E2E_SCREENSHOTS !== '1') return {};
  mkdirSync(join(ROOT, 'test', 'e2e', 'screenshots'), { recursive: true });
  return { screenshot: join(ROOT, 'test', 'e2e', 'screenshots', name) };
}

// Without Chromium the test skips on a workstation, but fails in CI (which installs it: see .ci/run).
const missing = chromiumAvailable() ? null : `Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium; CHROMIUM_PATH overrides)`;
const skip = missing !== null && process.env.CI === undefined ? missing : false;

let browser: ReportBrowser | null = null;
before(async () => {
  if (missing !== null) return;
  browser = await openReportBrowser();
});
after(async () => {
  await browser?.close();
  if (workDir !== null) rmSync(workDir, { recursive: true, force: true });
});

test('Chromium is installed where CI expects it', { skip }, () => {
  assert.equal(missing, null, missing ?? '');
});

// One real run serves every test (the second breaks a copy of its data; the last compares it with a run
// on a faster engine).
let shared: Promise<{ out: string; data: ReportData }> | null = null;
let workDir: string | null = null;
function realRun(): Promise<{ out: string; data: ReportData }> {
  workDir ??= mkdtempSync(join(tmpdir(), 'roundload-report-browser-'));
  shared ??= makeRun(workDir);
  return shared;
}

/** Small windows so a few seconds of run give lines over time, not single points, and enough windows for
 * a comparison's intervals. Through the built-in hop, with canaries every 100 ms on both legs (the hop,
 * and around it to the engine). */
const SETTINGS = ['window_s=0.1', 'watchdog.stall_ms=1000', 'target.via={kind: hop}', 'monitor.canary_interval_s=0.1'];

async function makeRun(dir: string): Promise<{ out: string; data: ReportData }> {
  const out = join(dir, 'run');
  // One stream stalls in round 3, so the hang table, the hang markers and a failing JUnit case are on the page too.
  const workload = await loadWorkload('workloads/smoke.yaml', {
    agents: 3,
    rounds: 6,
    set: [...SETTINGS, 'engine.faults=[{kind: stall_mid_stream, from_round: 3, times: 1}]'],
  });
  const result = await executeRun({ workload, out });
  assert.equal(result.status, 'completed');
  return { out, data: await collectReportData(out, result.summary) };
}

test("a real run's report.html opens offline with every chart drawn with data, no console errors and no request but file://", { skip, timeout: 90_000 }, async () => {
  assert.ok(browser, missing ?? 'browser');
  const { out, data } = await realRun();
  const expected = [...data.charts.latency, ...data.charts.time, ...data.charts.gauges, ...data.charts.canaries, ...data.charts.client].map((c) => c.id);
  for (const id of ['latency-ttft', 'latency-itl', 'latency-e2e', 'throughput', 'latency-over-time', 'canaries', 'in-flight', 'client-loop'])
    assert.ok(expected.includes(id), `${id} is in the report data`);
  const scrapes = readJsonl(join(out, 'gauges.jsonl')).length;
  assert.equal(data.charts.gauges.length > 0, scrapes > 0, `gauge charts exactly when gauges.jsonl has scrapes (${scrapes})`);

  if (SCREENSHOT !== undefined) mkdirSync(join(ROOT, 'docs'), { recursive: true });
  // The screenshot runs from the header down to the first row of gauge charts (or the time charts).
  const shot = { screenshot: SCREENSHOT!, screenshotTo: ['#gauges .chart:nth-child(3)', '#gauges .chart', '#over-time'] };
  const page = await browser.check(join(out, 'report.html'), { ...(SCREENSHOT === undefined ? {} : shot), pixels: ['canaries'] });
  assert.equal(page.title, 'roundload · smoke · completed');
  assert.equal(data.summary.totals.hangs, 1, 'the stall fault fired once');
  assert.equal(page.hangRows, 1, 'the hang is in the table');
  assert.ok(
    data.charts.time.every((c) => c.markers.length === 1),
    'and marked on the time charts',
  );
  assert.deepEqual(page.charts.map((c) => c.id).sort(), [...expected].sort(), 'every chart of the data has its element');
  assert.deepEqual(page.empty, [], `charts without data: ${JSON.stringify(page.charts)}`);
  for (const c of page.charts) assert.ok(c.points !== null && c.points > 0 && c.canvas && c.error === null, JSON.stringify(c));
  assert.equal(page.legendDashes, 0, 'every legend shows a value without hovering');
  assert.deepEqual(page.consoleErrors, []);
  assert.deepEqual(page.foreignRequests, []);

  // The canaries chart draws each leg as a visible line: drawn alone, its colour fills (nearly) every
  // column from its first point to its last, across most of the plot (separate dots would leave gaps).
  const legs = page.pixels.canaries ?? [];
  const lines = legs.filter((l) => l.label === 'proxied ms' || l.label === 'direct ms');
  assert.equal(lines.length, 2, JSON.stringify(legs));
  const plotColumns = Math.max(...legs.map((l) => l.last)) + 1;
  for (const l of lines) {
    assert.ok(l.coverage >= 0.9, `${l.label}: a line, not dots: ${JSON.stringify(l)}`);
    assert.ok(l.columns >= plotColumns * 0.6, `${l.label}: across the run: ${JSON.stringify(l)} of ${plotColumns} columns`);
  }
  assert.deepEqual(page.requests, [new URL(`file://${join(out, 'report.html')}`).href]);

  // junit.xml of the same run is well-formed XML by the browser's own parser, with the cases counted.
  const xml = await browser.parseXml(readFileSync(join(out, 'junit.xml'), 'utf8'));
  assert.equal(xml.error, null);
  assert.equal(xml.testcases, Number(/<testsuite [^>]*tests="(\d+)"/.exec(renderJunit(data.summary))![1]));
  assert.deepEqual(xml.failures, junitCases(data.summary).filter((c) => c.failure !== null).length);
  assert.ok(xml.failures >= 1, 'the hang fails "no hangs"');
});

test("the checker catches a chart whose data is empty (the same page, one chart's series broken)", { skip, timeout: 90_000 }, async () => {
  assert.ok(browser, missing ?? 'browser');
  const { out, data } = await realRun();
  const broken = structuredClone(data);
  const victim = broken.charts.latency[1]!;
  victim.series = victim.series.map((s) => ({ ...s, values: s.values.map(() => null) }));
  const file = join(out, 'broken.html');
  writeFileSync(file, renderReportHtml(broken));
  const page = await browser.check(file);
  assert.deepEqual(page.empty, [victim.id], 'exactly the broken chart is reported empty');
  const c = page.charts.find((x) => x.id === victim.id)!;
  assert.equal(c.points, 0);
  assert.equal(c.canvas, false);
  // And the intact page of the same run passes, so the difference is the data alone.
  const intact = join(out, 'intact.html');
  writeFileSync(intact, renderReportHtml(data));
  assert.deepEqual((await browser.check(intact)).empty, []);
});

test('a stretch of zeros (a stall) is drawn as a visible line above the axis, not along the clipped bottom edge', { skip, timeout: 90_000 }, async () => {
  assert.ok(browser, missing ?? 'browser');
  const { out, data } = await realRun();
  const stalled = structuredClone(data);
  const chart = stalled.charts.time.find((c) => c.id === 'throughput')!;
  const line = chart.series[0]!;
  const drawn = line.values.flatMap((v, i) => (v === null ? [] : [i]));
  assert.ok(drawn.length >= 8, `enough windows to stall: ${drawn.length}`);
  // The middle third of the windows at zero, the rest as they were.
  for (const i of drawn.slice(Math.floor(drawn.length / 3), Math.floor((2 * drawn.length) / 3))) line.values[i] = 0;
  Object.assign(chart, { series: [line], y2_label: null, markers: [], partial: null });
  const file = join(out, 'stalled.html');
  writeFileSync(file, renderReportHtml(stalled));
  const page = await browser.check(file, { pixels: ['throughput'] });
  const [pixels] = page.pixels.throughput ?? [];
  assert.ok(pixels !== undefined && pixels.coverage >= 0.97, `the line, zeros included: ${JSON.stringify(pixels)}`);
});

/** The real run and one on an engine decoding twice as fast (engine settings are not part of the workload
 * identity), compared. */
let armsShared: Promise<{ pair: ArmPair; comparison: Comparison }> | null = null;
function twoArms(): Promise<{ pair: ArmPair; comparison: Comparison }> {
  armsShared ??= (async () => {
    const { out: runA } = await realRun();
    const runB = join(workDir!, 'run-b');
    const workload = await loadWorkload('workloads/smoke.yaml', { agents: 3, rounds: 6, set: [...SETTINGS, 'engine.decode_step_ms=3'] });
    assert.equal((await executeRun({ workload, out: runB })).status, 'completed');
    const pair = { a: { name: 'slow', runs: [await loadRun(runA)] }, b: { name: 'fast', runs: [await loadRun(runB)] } };
    return { pair, comparison: compareArms(pair.a, pair.b) };
  })();
  return armsShared;
}

test("compare.html of two real runs draws the deltas as a forest plot and both arms' time series as visible lines", { skip, timeout: 90_000 }, async () => {
  assert.ok(browser, missing ?? 'browser');
  const { pair, comparison } = await twoArms();
  const file = writeComparisons([comparison], join(workDir!, 'compare.html'), [pair]).html;
  const rows = comparison.phases[0]!.rows.filter((r) => r.kind === 'relative');
  const VERDICT_COLORS: Record<string, string> = { better: '#047857', worse: '#b91c1c', equivalent: '#475569', inconclusive: '#b45309', undecided: '#b45309', 'insufficient data': '#b45309' };
  const colors = [...new Set(rows.filter((r) => r.delta !== null).map((r) => VERDICT_COLORS[r.verdict]!))];
  const forest = 'forest-0-main-relative';
  const page = await browser.check(file, { pixels: ['arms-0-main-tokens'], colors: { [forest]: colors } });
  assert.deepEqual(page.consoleErrors, []);
  assert.deepEqual(page.foreignRequests, []);
  assert.deepEqual(page.empty, [], JSON.stringify(page.charts));
  const ids = page.charts.map((c) => c.id).sort();
  assert.deepEqual(ids, ['arms-0-main-e2e', 'arms-0-main-tokens', 'arms-0-main-ttft', 'forest-0-main-absolute', forest]);
  assert.equal(page.charts.find((c) => c.id === forest)!.points, rows.filter((r) => r.delta !== null).length, 'a row drawn per figure with a delta');
  // Every verdict colour of the rows is on the canvas: each row's square (10 px) or interval bar.
  for (const c of colors) assert.ok(page.colorColumns[forest]![c]! >= 8, `${c} drawn: ${JSON.stringify(page.colorColumns)}`);
  // Both arms' throughput: lines, each across most of the plot.
  const arms = page.pixels['arms-0-main-tokens'] ?? [];
  assert.equal(arms.length, 2, JSON.stringify(arms));
  const plotColumns = Math.max(...arms.map((l) => l.last)) + 1;
  for (const l of arms) assert.ok(l.coverage >= 0.9 && l.columns >= plotColumns * 0.3, `${l.label}: ${JSON.stringify(l)} of ${plotColumns}`);
  assert.equal(page.legendDashes, 0);
});

test('compare.html fits the delta axis to the decided intervals: an inconclusive −100% … +539% is an arrow with its ends written, the decided bars stay wide', { skip, timeout: 120_000 }, async () => {
  assert.ok(browser, missing ?? 'browser');
  const { comparison } = await twoArms();
  // The shape of the issue: decided figures within ±25%, one inconclusive p99 whose interval runs −100% … +539%.
  const wide = structuredClone(comparison);
  const rows = wide.phases[0]!.rows.filter((r) => r.kind === 'relative' && r.delta !== null);
  assert.ok(rows.length >= 4, `enough relative rows: ${rows.length}`);
  rows.forEach((r, i) =>
    Object.assign(
      r,
      i === 1
        ? { verdict: 'inconclusive', delta: 140, low: -100, high: 539 }
        : { verdict: i % 2 === 0 ? 'better' : 'equivalent', delta: i % 2 === 0 ? 15 : 1, low: i % 2 === 0 ? 8 : -2, high: i % 2 === 0 ? 22 : 2.5 },
    ),
  );
  const file = join(workDir!, 'compare-wide.html');
  writeFileSync(file, comparisonHtml([wide]));
  const forest = 'forest-0-main-relative';
  const page = await browser.check(file, { colors: { [forest]: ['#047857', '#b45309'] }, ...e2eShot('compare-forest.png'), screenshotTo: [`[data-chart="${forest}"]`] });
  assert.deepEqual(page.consoleErrors, []);
  assert.deepEqual(page.empty, []);
  // A decided bar of 14 points spans a good share of the plot (on an axis to +539% it would be a few columns).
  const cols = page.colorColumns[forest]!;
  assert.ok(cols['#047857']! >= 120, `the decided (green) bars are wide: ${JSON.stringify(cols)}`);
  // The inconclusive row runs to both edges of the plot as arrows.
  assert.ok(cols['#b45309']! >= cols['#047857']!, `the inconclusive bar spans the axis: ${JSON.stringify(cols)}`);
});

test("a ramp's report.html draws its capacity chart: offered load against latency and throughput, the knee marked", { skip, timeout: 120_000 }, async (t) => {
  assert.ok(browser, missing ?? 'browser');
  const out = join(workDir ?? mkdtempSync(join(tmpdir(), 'roundload-report-browser-')), 'ramp');
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const workload = await loadWorkload('workloads/capacity-knee.yaml', {
    set: ['window_s=0.5', 'agents.stages=[{duration: 3s, rate_per_s: 1}, {duration: 3s, rate_per_s: 4}, {duration: 3s, rate_per_s: 12}]', 'engine.max_running_requests=8'],
  });
  const result = await executeRun({ workload, out });
  const c = result.summary.capacity;
  assert.ok(c !== undefined && c.stages.length === 3, 'three stages judged');
  const data = await collectReportData(out, result.summary);
  assert.equal(data.charts.capacity.length, 1);
  writeFileSync(join(out, 'report.html'), renderReportHtml(data));
  const page = await browser.check(join(out, 'report.html'), { ...e2eShot('report-capacity.png'), screenshotTo: ['#capacity'], colors: { capacity: ['#2563eb', '#d97706'] } });
  assert.deepEqual(page.consoleErrors, []);
  assert.deepEqual(page.empty, []);
  const chart = page.charts.find((x) => x.id === 'capacity');
  assert.ok(chart !== undefined && chart.points !== null && chart.points >= 12, `TTFT, ITL and throughput at every stage: ${JSON.stringify(chart)}`);
  // TTFT p50 (blue) and throughput (amber) drawn as lines across the offered loads.
  for (const [color, n] of Object.entries(page.colorColumns.capacity!)) assert.ok(n >= 200, `${color}: ${n} columns`);
  assert.equal(page.legendDashes, 0);
});

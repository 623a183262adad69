// `npm run bench -- trend-power [--histories N]`: the power and false alarms of `trend` with its defaults,
// measured on simulated nightly histories through the code `roundload trend` runs (buildTrendOfValues, the
// function the CLI calls for a database or a CSV). Issue 43's targets and their definitions:
//
// - A history is nights of one latency figure around 100 with gaussian noise of relative sd `noise`, either
//   independent from night to night or AR(1) with lag-1 correlation ρ 0.6 (the marginal sd is `noise` either
//   way). A worsening of `step` (10%: the figure × 1.10) begins at night c, with `before` nights before it
//   (10: a 12-night history whose worsening begins at night 11, the check on night 12 seeing ten nights before
//   it, as the oracle; also 7, a change at night 8, and 20).
// - "Flagged by the second night after it": `trend` over nights 1…c+1 (the nightly job on the worsening's
//   second night) fails `--fail-on regression` with a regression change point beginning at night c — the
//   "confirmed" call; also counted at c or c − 1 (a first night of the step high enough that the night before
//   it and it were confirmed together: the job alerted a night sooner, the change placed a night early).
//   "Suspected": `trend` over nights 1…c shows a regression suspected on night c (never fails the job).
// - A/A: 12 nights, no change. "An alert on the newest two nights": `trend` over the 12 nights has a
//   regression change point beginning at night 11 (a new alert that night); "exit 1": `--fail-on regression`
//   fails for any reason (an alert of an earlier night that still holds counts too); and a regression
//   suspected on night 12.
//
// Each cell simulates `histories` seeded histories (default 2,000: a 95% interval of ±0.6 points at 2%, ±1.6
// at 85%). Then the four cells with a target go through the CLI as a user's nightly job would: the same
// histories written as a CSV, one workload each, and `roundload trend FILE.csv --all --fail-on regression
// --json` (from source, as the other benches start it); every workload's alert must be the one simulated.
// Last, the first target's ceiling: the Neyman–Pearson bound of its cells (neymanPearsonBound).
// Under a minute on the 2-core machine. Exit 1 when a target is missed or the CLI disagrees (the tables say which).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ar1 } from '../src/trend/ar1.js';
import { buildTrendOfValues, metricOf, type Trend } from '../src/trend/index.js';
import { Rng } from '../src/util/index.js';
import { alertIndexOfJson, alertIndexOfTrend, nights, nightsCsv, NIGHTS_FIGURE, type AlertJson } from '../test/helpers/nights.js';

const ROOT = new URL('../', import.meta.url).pathname;
const METRIC = metricOf(NIGHTS_FIGURE)!;

function trendOf(values: readonly number[], drift: number | undefined): Trend {
  const runs = values.map((_, i) => ({ runId: `night-${i + 1}`, startedAt: null, labels: {}, dir: null }));
  return buildTrendOfValues('main', runs, [{ metric: METRIC, values: [...values] }], drift === undefined ? {} : { drift });
}

interface Cell {
  label: string;
  noise: number;
  rho: number;
  step: number;
  /** Nights before the step (or, for A/A, in the history less 2). */
  before: number;
  drift?: number;
  /** The target: at least (power) or at most (A/A) this share. */
  target?: { atLeast?: number; atMost?: number };
}

const CELLS: Cell[] = [
  { label: '10% worse, 3% noise, independent', noise: 0.03, rho: 0, step: 0.1, before: 10, target: { atLeast: 0.9 } },
  { label: '10% worse, 3% noise, AR(1) ρ 0.6', noise: 0.03, rho: 0.6, step: 0.1, before: 10, target: { atLeast: 0.8 } },
  { label: 'A/A, 3% noise, independent', noise: 0.03, rho: 0, step: 0, before: 10, target: { atMost: 0.02 } },
  { label: 'A/A, 3% noise, AR(1) ρ 0.6', noise: 0.03, rho: 0.6, step: 0, before: 10, target: { atMost: 0.02 } },
  { label: '5% worse, 2% noise, independent', noise: 0.02, rho: 0, step: 0.05, before: 10 },
  { label: '5% worse, 2% noise, AR(1) ρ 0.6', noise: 0.02, rho: 0.6, step: 0.05, before: 10 },
  { label: '10% worse, 3% noise, independent, change at night 8', noise: 0.03, rho: 0, step: 0.1, before: 7 },
  { label: '10% worse, 3% noise, AR(1) ρ 0.6, change at night 8', noise: 0.03, rho: 0.6, step: 0.1, before: 7 },
  { label: '10% worse, 3% noise, independent, 20 nights before', noise: 0.03, rho: 0, step: 0.1, before: 20 },
  { label: '10% worse, 3% noise, AR(1) ρ 0.6, 20 nights before', noise: 0.03, rho: 0.6, step: 0.1, before: 20 },
  { label: '10% worse, 3% noise, independent, --drift 0', noise: 0.03, rho: 0, step: 0.1, before: 10, drift: 0 },
  { label: 'A/A, 3% noise, independent, --drift 0', noise: 0.03, rho: 0, step: 0, before: 10, drift: 0 },
  { label: 'A/A, 3% noise, AR(1) ρ 0.6, --drift 0', noise: 0.03, rho: 0.6, step: 0, before: 10, drift: 0 },
];

interface Measured {
  /** Power cells: confirmed by the second night at night c; at c or c − 1; suspected on the first night.
   * A/A: an alert on the newest two nights; exit 1; a regression suspected on the newest night. */
  main: number;
  near: number;
  other: number;
}

/** The cell's seeded histories, up to the step's second night (`before` + 2 nights). */
function historiesOf(cell: Cell, histories: number, seed: number): number[][] {
  const rng = Rng.from('trend-power', seed, cell.label);
  return Array.from({ length: histories }, () => nights(rng, cell.before + 2, cell.rho, cell.noise, cell.step, cell.before));
}

/** The share that counts in the first two columns: the alert at night c; at c or c − 1 (A/A: any alert, exit 1). */
function tally(cell: Cell, alerts: readonly (number | null)[]): { main: number; near: number } {
  const c = cell.before;
  const near = cell.step === 0 ? alerts.filter((a) => a !== null) : alerts.filter((a) => a === c || a === c - 1);
  return { main: alerts.filter((a) => a === c).length / alerts.length, near: near.length / alerts.length };
}

function measure(cell: Cell, histories: number, seed: number): Measured {
  const xs = historiesOf(cell, histories, seed);
  const alerts = xs.map((x) => alertIndexOfTrend(trendOf(x, cell.drift)));
  // A/A: suspected on the newest night; a worsening: on its first night (the job the night before).
  const suspected = xs.filter((x) => trendOf(cell.step === 0 ? x : x.slice(0, -1), cell.drift).figures[0]!.suspected?.kind === 'regression');
  return { ...tally(cell, alerts), other: suspected.length / histories };
}

interface ThroughCli {
  main: number;
  near: number;
  /** Workloads whose alert (its night, or none) the CLI and the simulation agree on. */
  agreed: number;
  seconds: number;
}

/** The cell's histories as a CSV through `roundload trend FILE.csv --all --fail-on regression --json`. */
function throughCli(cell: Cell, histories: number, seed: number): ThroughCli {
  const xs = historiesOf(cell, histories, seed);
  const dir = mkdtempSync(join(tmpdir(), 'roundload-trend-power-'));
  try {
    const csv = join(dir, 'histories.csv');
    writeFileSync(csv, nightsCsv(xs.map((values, i) => ({ workload: `h${i + 1}`, values }))));
    const drift = cell.drift === undefined ? [] : ['--drift', String(cell.drift)];
    const started = Date.now();
    const res = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'trend', csv, '--all', '--fail-on', 'regression', '--json', '--out', join(dir, 'trend.html'), ...drift], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      timeout: 600_000,
    });
    const seconds = (Date.now() - started) / 1000;
    if (res.status !== 0 && res.status !== 1) throw new Error(`roundload trend exited ${String(res.status ?? res.signal)}: ${res.stderr}`);
    const workloads = (JSON.parse(res.stdout) as { workloads: AlertJson[] }).workloads;
    const alerts = workloads.map(alertIndexOfJson);
    const agreed = xs.filter((x, i) => workloads[i]?.workload === `h${i + 1}` && alerts[i] === alertIndexOfTrend(trendOf(x, cell.drift))).length;
    return { ...tally(cell, alerts), agreed, seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** log ∫₀^∞ s^k·exp(−s²/2 + b·s) ds, by the trapezoid rule in log space (the integrand is negligible past b + 14). */
function logMoment(k: number, b: number): number {
  const top = Math.max(b, 0) + 14;
  const h = top / 200;
  const logs = Array.from({ length: 200 }, (_, i) => {
    const s = (i + 0.5) * h;
    return k * Math.log(s) - (s * s) / 2 + b * s;
  });
  const peak = Math.max(...logs);
  return peak + Math.log(h * logs.reduce((sum, l) => sum + Math.exp(l - peak), 0));
}

/**
 * The Neyman–Pearson bound of the first target's kind of cell: the power at night c of the most powerful test
 * whose answer does not depend on the figure's level and unit, for exactly this step (`delta` noise sds from
 * night index `c` of `n`, independent nights) against exactly nights drifting at `rho` with no step, at
 * `alpha`. It is the likelihood ratio of the nights' shape (the residuals about their mean, scaled to length 1:
 * what a level- and unit-free test sees), whose density is known for gaussian nights; no such test that keeps
 * `alpha` on nights at `rho` (let alone at every drift up to it) flags this step more often.
 */
function neymanPearsonBound(n: number, c: number, delta: number, rho: number, alpha: number, nullCount: number, count: number, seed: number): number {
  const step = Array.from({ length: n }, (_, i) => (i >= c ? 1 : 0) - (n - c) / n);
  const a = Math.sqrt(1 - rho * rho);
  const logRatio = (x: readonly number[]): number => {
    const m = x.reduce((sum, v) => sum + v, 0) / n;
    const norm = Math.sqrt(x.reduce((sum, v) => sum + (v - m) ** 2, 0));
    const u = x.map((v) => (v - m) / norm);
    // The shape's density under the step (σ integrated out), over its density under AR(1) at rho (the
    // Prais–Winsten transform: u'Σ⁻¹u about the GLS level, 1'Σ⁻¹1 and |Σ|).
    const stepped = logMoment(n - 2, delta * u.reduce((sum, v, i) => sum + v * step[i]!, 0));
    let s11 = 0;
    let s1u = 0;
    let suu = 0;
    u.forEach((v, t) => {
      const y = t === 0 ? a * v : v - rho * u[t - 1]!;
      const one = t === 0 ? a : 1 - rho;
      s11 += one * one;
      s1u += one * y;
      suu += y * y;
    });
    const drifting = -0.5 * (n - 1) * Math.log(1 - rho * rho) - 0.5 * Math.log(s11 / (1 - rho * rho)) - ((n - 1) / 2) * Math.log((suu - (s1u * s1u) / s11) / (1 - rho * rho));
    return stepped - drifting;
  };
  const rng = Rng.from('trend-power-bound', seed, n, c);
  const nulls = Array.from({ length: nullCount }, () => logRatio(ar1(n, rho, rng))).sort((x, y) => x - y);
  const threshold = nulls[Math.floor(nullCount * (1 - alpha))]!;
  let flagged = 0;
  for (let i = 0; i < count; i += 1) if (logRatio(ar1(n, 0, rng).map((e, t) => e + (t >= c ? delta : 0))) > threshold) flagged += 1;
  return flagged / count;
}

/** `84.6% ± 1.6` (a 95% interval's half-width). */
function share(p: number, n: number): string {
  return `${(100 * p).toFixed(1)}% ± ${(196 * Math.sqrt((p * (1 - p)) / n)).toFixed(1)}`;
}

export function trendPowerBench(args: string[]): number {
  const at = args.indexOf('--histories');
  const histories = at === -1 ? 2000 : Number(args[at + 1]);
  if (!Number.isInteger(histories) || histories < 10) {
    process.stderr.write('usage: npm run bench -- trend-power [--histories N]\n');
    return 2;
  }
  const started = Date.now();
  const lines = [
    `trend power and false alarms, ${histories} simulated histories a cell, trend's defaults unless said (--drift 0.6, --alert-pvalue 0.02, --min-change 3%)`,
    '',
    '| history | confirmed by its 2nd night, at night c (power) · A/A: an alert on the newest two nights | at c or c − 1 · A/A: exit 1 | suspected on its 1st night · A/A: on the newest | target (first column) |',
    '| --- | --- | --- | --- | --- |',
  ];
  let missed = 0;
  const measured: Measured[] = [];
  CELLS.forEach((cell, i) => {
    const m = measure(cell, histories, i + 1);
    measured.push(m);
    const t = cell.target;
    const met =
      t === undefined
        ? ''
        : t.atLeast !== undefined
          ? m.main >= t.atLeast
            ? `≥ ${100 * t.atLeast}%: met`
            : `≥ ${100 * t.atLeast}%: MISSED`
          : m.main <= t.atMost!
            ? `≤ ${100 * t.atMost!}%: met`
            : `≤ ${100 * t.atMost!}%: MISSED`;
    if (met.endsWith('MISSED')) missed += 1;
    lines.push(`| ${cell.label} | ${share(m.main, histories)} | ${share(m.near, histories)} | ${share(m.other, histories)} | ${met} |`);
    process.stderr.write(`trend-power: ${cell.label} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  });
  lines.push(
    '',
    'the same histories of the cells with a target, through `roundload trend FILE.csv --all --fail-on regression --json` (one workload each):',
    '',
    '| history | at night c · A/A: an alert on the newest two nights | at c or c − 1 · A/A: exit 1 | alerts as simulated | seconds |',
    '| --- | --- | --- | --- | --- |',
  );
  let disagreed = 0;
  CELLS.forEach((cell, i) => {
    if (cell.target === undefined) return;
    const m = throughCli(cell, histories, i + 1);
    if (m.agreed !== histories) disagreed += 1;
    lines.push(`| ${cell.label} | ${share(m.main, histories)} | ${share(m.near, histories)} | ${m.agreed} of ${histories} | ${m.seconds.toFixed(1)} |`);
    process.stderr.write(`trend-power: ${cell.label} through the CLI in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  });
  // The first target's ceiling: its cells (independent nights, 10% worse at 3% noise) against the most any
  // level- and unit-free test can do there while keeping 2% at ρ 0.6.
  const count = 10 * histories;
  lines.push(
    '',
    `the ceiling: the most any test free of the figure's level and unit can flag at night c on independent nights (a 10% step at 3% noise, without the step's extra 0.3% of noise), keeping 2% false alarms on nights at ρ 0.6 (the Neyman–Pearson bound: ${count} simulated histories with the step, ${5 * count} without for its threshold; within about a point, the threshold's own noise):`,
    '',
    '| nights before the step | the bound | this trend at night c (above) |',
    '| --- | --- | --- |',
  );
  CELLS.forEach((cell, i) => {
    if (cell.rho !== 0 || cell.step !== 0.1 || cell.drift !== undefined) return;
    const bound = neymanPearsonBound(cell.before + 2, cell.before, cell.step / cell.noise, 0.6, 0.02, 5 * count, count, i + 1);
    lines.push(`| ${cell.before} | ${(100 * bound).toFixed(1)}% | ${share(measured[i]!.main, histories)} |`);
  });
  const verdict = [
    missed === 0 ? 'every target met' : `${missed} target${missed === 1 ? '' : 's'} missed`,
    disagreed === 0 ? 'the CLI alerts as simulated' : `the CLI disagrees with the simulation in ${disagreed} cell${disagreed === 1 ? '' : 's'}`,
  ];
  lines.push('', `${((Date.now() - started) / 1000).toFixed(0)} s; ${verdict.join('; ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return missed === 0 && disagreed === 0 ? 0 : 1;
}

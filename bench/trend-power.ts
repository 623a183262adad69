// `npm run bench -- trend-power [--histories N]`: the power and false alarms of `trend` with its defaults,
// measured on simulated nightly histories through the code `roundload trend` runs (buildTrendOfValues, the
// function the CLI calls for a database or a CSV). Issue 43's targets and their definitions:
//
// - A history is nights of one latency figure around 100 with gaussian noise of relative sd `noise`, either
//   independent from night to night or AR(1) with lag-1 correlation ρ 0.6 (the marginal sd is `noise` either
//   way). A worsening of `step` (10%: the figure × 1.10) begins at night c, with `before` nights before it
//   (10: a 12-night history whose worsening begins at night 11, the check on night 12 seeing ten nights before
//   it, as the issue's oracle; also 7, a change at night 8, and 20).
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
// at 85%); about 1-2 minutes on the 2-core machine. Exit 1 when a target is missed (the table says which).
import { buildTrendOfValues, metricOf, type Trend } from '../src/trend/index.js';
import { Rng } from '../src/util/index.js';
import { nights } from '../test/helpers/nights.js';

const METRIC = metricOf('itl_p50')!;

function trendOf(values: readonly number[], drift: number | undefined): Trend {
  const runs = values.map((_, i) => ({ runId: `night-${i + 1}`, startedAt: null, labels: {}, dir: null }));
  return buildTrendOfValues('main', runs, [{ metric: METRIC, values: [...values] }], drift === undefined ? {} : { drift });
}

/** A regression change point beginning at series index `at` that fails `--fail-on regression`. */
const alertAt = (t: Trend, at: number): boolean => t.regressions.some((f) => f.recentRegression!.index === at);

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

function measure(cell: Cell, histories: number, seed: number): Measured {
  const rng = Rng.from('trend-power', seed, cell.label);
  let main = 0;
  let near = 0;
  let other = 0;
  for (let h = 0; h < histories; h += 1) {
    const x = nights(rng, cell.before + 2, cell.rho, cell.noise, cell.step, cell.before);
    if (cell.step === 0) {
      const t = trendOf(x, cell.drift);
      if (alertAt(t, cell.before)) main += 1;
      if (t.regressions.length > 0) near += 1;
      if (t.figures[0]!.suspected?.kind === 'regression') other += 1;
    } else {
      const t = trendOf(x, cell.drift);
      if (alertAt(t, cell.before)) main += 1;
      if (alertAt(t, cell.before) || alertAt(t, cell.before - 1)) near += 1;
      if (trendOf(x.slice(0, -1), cell.drift).figures[0]!.suspected?.kind === 'regression') other += 1;
    }
  }
  return { main: main / histories, near: near / histories, other: other / histories };
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
  CELLS.forEach((cell, i) => {
    const m = measure(cell, histories, i + 1);
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
  lines.push('', `${((Date.now() - started) / 1000).toFixed(0)} s; ${missed === 0 ? 'every target met' : `${missed} target${missed === 1 ? '' : 's'} missed`}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return missed === 0 ? 0 : 1;
}

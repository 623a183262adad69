// Simulated nightly histories for the trend's tests and the power bench: a figure around 100 whose relative
// noise wanders as AR(1) noise does, with a step from a given night; and the same histories as a CSV of
// workloads for `roundload trend FILE.csv --all`, with the night of each workload's alert read back from `--json`.
import { ar1 } from '../../src/trend/ar1.js';
import type { Trend } from '../../src/trend/index.js';
import type { Rng } from '../../src/util/index.js';

/** `n` nights around 100 with AR(1) noise (relative sd `noise`, lag-1 `rho`), × (1 + `step`) from night index `at`. */
export function nights(rng: Rng, n: number, rho: number, noise: number, step = 0, at = Infinity): number[] {
  return ar1(n, rho, rng).map((e, i) => 100 * (1 + noise * e) * (i >= at ? 1 + step : 1));
}

/** The figure the histories stand for (ms, lower is better). */
export const NIGHTS_FIGURE = 'itl_p50';

/** A trend CSV of histories, one workload each (`workload,run,itl_p50`, runs `night-1`…), every value written
 * as JavaScript prints it, so the file reads back as the very same numbers. */
export function nightsCsv(histories: readonly { workload: string; values: readonly number[] }[]): string {
  const lines = histories.flatMap((h) => h.values.map((v, i) => `${h.workload},night-${i + 1},${String(v)}`));
  return `workload,run,${NIGHTS_FIGURE}\n${lines.join('\n')}\n`;
}

/** What `trend --json` says of one workload, as far as the alert goes. */
export interface AlertJson {
  workload: string | null;
  regression: boolean;
  change_points: { figure: string; run_number: number; worse: boolean; recent: boolean }[];
}

/** The series index (0-based) where the regression `--fail-on regression` acts on begins, read from `--json`:
 * the newest change point of the figure when it is a recent regression; null when there is none. */
export function alertIndexOfJson(w: AlertJson): number | null {
  const newest = w.change_points.filter((c) => c.figure === NIGHTS_FIGURE).at(-1);
  return w.regression && newest !== undefined && newest.worse && newest.recent ? newest.run_number - 1 : null;
}

/** The same from a trend built in process. */
export function alertIndexOfTrend(t: Trend): number | null {
  return t.regressions[0]?.recentRegression?.index ?? null;
}

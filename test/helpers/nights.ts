// Simulated nightly histories for the trend's tests and the power bench: a figure around 100 whose relative
// noise wanders as AR(1) noise does, with a step from a given night.
import { ar1 } from '../../src/trend/ar1.js';
import type { Rng } from '../../src/util/index.js';

/** `n` nights around 100 with AR(1) noise (relative sd `noise`, lag-1 `rho`), × (1 + `step`) from night index `at`. */
export function nights(rng: Rng, n: number, rho: number, noise: number, step = 0, at = Infinity): number[] {
  return ar1(n, rho, rng).map((e, i) => 100 * (1 + noise * e) * (i >= at ? 1 + step : 1));
}

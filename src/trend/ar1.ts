// Nights that drift, simulated: a gaussian AR(1) series, the surrogate both significance tests calibrate on
// (E-divisive's drift-aware null, the newest-nights test) and what the tests and the power bench simulate.
import type { Rng } from '../util/index.js';

/** A standard gaussian draw (Box–Muller, two uniform draws). */
function gauss(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

/** A gaussian AR(1) series of `n` values, unit marginal variance, lag-1 correlation `rho`. */
export function ar1(n: number, rho: number, rng: Rng): number[] {
  const out: number[] = [];
  let e = gauss(rng);
  for (let i = 0; i < n; i += 1) {
    out.push(e);
    e = rho * e + Math.sqrt(1 - rho * rho) * gauss(rng);
  }
  return out;
}

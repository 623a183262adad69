// The per-look significance of a sequential A/B: looking after pairs `first`, …, `maxPairs` with a paired t
// test at the same nominal level α′ each time (a Pocock boundary, Pocock 1977, "Group sequential methods
// in the design and analysis of clinical trials", Biometrika 64(2)), α′ chosen so that the chance that ANY
// look crosses is α when there is no difference. Looks are strongly correlated (each adds one pair to the
// last), so α′ is far larger than Bonferroni's α / looks: intervals are narrower and fewer pairs decide.
//
// The t statistics of successive looks have no closed-form joint law, so α′ is calibrated once per
// (α, looks, sides) by Monte Carlo: a fixed-seed simulation of 20,000 sequences of independent normal pair
// differences, and a bisection on α′ over those same sequences (deterministic: the same α′ every time).
// Pair differences are means of whole runs, so close to normal; the unit test checks the family-wise error
// on autocorrelated, drifting runs as well.
import { SeededRandom, tQuantile } from './stats.js';

const SEQUENCES = 20_000;
const SEED = 23;
const cache = new Map<string, number>();

/** Nominal level α′ of each look (two-sided for `sides: 2`, one-sided for 1) so that looks after pairs
 * `first` … `maxPairs` together cross with probability `alpha` under no difference. */
export function lookAlpha(alpha: number, maxPairs: number, first: number, sides: 1 | 2): number {
  if (maxPairs <= first) return alpha;
  const key = `${alpha}:${maxPairs}:${first}:${sides}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const stats = simulatedStatistics(maxPairs, first, sides);
  // Bisection on log α′ between Bonferroni's α / looks (too strict) and α (too loose).
  let lo = Math.log(alpha / (maxPairs - first + 1));
  let hi = Math.log(alpha);
  for (let i = 0; i < 40; i += 1) {
    const mid = (lo + hi) / 2;
    if (crossingRate(stats, Math.exp(mid), first, sides) > alpha) hi = mid;
    else lo = mid;
  }
  const found = Math.exp(lo);
  cache.set(key, found);
  return found;
}

/** The t statistic at every look of every simulated sequence (two-sided: its absolute value), row-major. */
function simulatedStatistics(maxPairs: number, first: number, sides: 1 | 2): Float64Array[] {
  const rng = new SeededRandom(SEED);
  const looks = maxPairs - first + 1;
  const out: Float64Array[] = [];
  for (let s = 0; s < SEQUENCES; s += 1) {
    const row = new Float64Array(looks);
    let sum = 0;
    let squares = 0;
    for (let n = 1; n <= maxPairs; n += 1) {
      const u = Math.max(1e-12, rng.next());
      const x = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
      sum += x;
      squares += x * x;
      if (n < first) continue;
      const m = sum / n;
      const sd = Math.sqrt(Math.max(0, (squares - n * m * m) / (n - 1)));
      const t = sd === 0 ? 0 : m / (sd / Math.sqrt(n));
      row[n - first] = sides === 2 ? Math.abs(t) : t;
    }
    out.push(row);
  }
  return out;
}

/** Share of sequences in which some look's statistic passes its critical value at level `a`. */
function crossingRate(stats: readonly Float64Array[], a: number, first: number, sides: 1 | 2): number {
  const looks = stats[0]!.length;
  const critical = Float64Array.from({ length: looks }, (_, k) => tQuantile(1 - a / sides, first + k - 1));
  let crossed = 0;
  for (const row of stats) {
    for (let k = 0; k < looks; k += 1) {
      if (row[k]! > critical[k]!) {
        crossed += 1;
        break;
      }
    }
  }
  return crossed / stats.length;
}

// Student's t quantile, pure and dependency-free: the tail from the regularized incomplete beta function (a
// continued fraction), inverted by Newton's method on the log of the tail against the log of t, where both
// tails are nearly straight lines. Tested against published tables and closed forms (test/compare/student-t).

/** Quantile of Student's t with `df` degrees of freedom (df > 0, fractional too; Infinity gives the normal's):
 * the `t` with P(T ≤ t) = p, to about 1e-13 relative (7e-12 at df 10⁶). NaN for p outside [0, 1], df ≤ 0 or NaN. */
export function studentTQuantile(p: number, df: number): number {
  if (!(p >= 0 && p <= 1) || !(df > 0)) return NaN;
  if (p === 0.5) return 0;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const tail = p < 0.5 ? p : 1 - p;
  const t = upperTailInverse(tail, df === Infinity ? NORMAL : studentT(df));
  return p < 0.5 ? -t : t;
}

/** A symmetric distribution seen from its upper tail: P(X > x) and the density at x, for x ≥ 0. */
interface Tail {
  upper(x: number): number;
  density(x: number): number;
  /** A first guess of the x whose upper tail is `q` (q < 0.5). */
  guess(q: number): number;
}

/** The x > 0 whose upper tail is `q` (0 < q < 0.5). With u = log x and h(u) = log upper(x) − log q, Newton's
 * step is h / (x·density/upper); a bracket of the u seen on either side of the root keeps every step inside it. */
function upperTailInverse(q: number, dist: Tail): number {
  const target = Math.log(q);
  let u = Math.log(dist.guess(q));
  let below = -Infinity; // log x known to be short of the root
  let above = Infinity; // log x known to be past it
  for (let i = 0; i < 200; i += 1) {
    const x = Math.exp(u);
    const upper = dist.upper(x);
    const h = Math.log(upper) - target;
    if (h === 0) return x;
    if (h > 0) below = u;
    else above = u;
    let next = u + h / ((x * dist.density(x)) / upper);
    if (!(next > below && next < above)) next = Number.isFinite(below) && Number.isFinite(above) ? (below + above) / 2 : h > 0 ? u + 1 : u - 1;
    if (Math.abs(next - u) <= 1e-15) return Math.exp(next);
    u = next;
  }
  return Math.exp(u);
}

function studentT(df: number): Tail {
  const a = df / 2;
  const logNorm = -logBeta(a, 0.5) - 0.5 * Math.log(df);
  return {
    // P(T > t) = I_x(df/2, 1/2) / 2 with x = df / (df + t²) (DLMF 8.17: the t distribution through the beta).
    upper: (t) => 0.5 * regularizedBeta(df / (df + t * t), (t * t) / (df + t * t), a, 0.5),
    density: (t) => Math.exp(logNorm - ((df + 1) / 2) * Math.log1p((t * t) / df)),
    // The Cornish-Fisher expansion of t in the normal quantile z (Abramowitz and Stegun 26.7.5), two terms;
    // loose for small df in the far tail, where the Newton steps on the log scale are still nearly exact.
    guess: (q) => {
      const z = NORMAL.guess(q);
      return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df);
    },
  };
}

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

const NORMAL: Tail = {
  // P(Z > z) = Q(1/2, z²/2) / 2, Q the regularized upper incomplete gamma function (DLMF 7.11.2 and 8.4.6).
  upper: (z) => 0.5 * regularizedGammaUpper(0.5, (z * z) / 2),
  density: (z) => Math.exp(-LOG_SQRT_2PI - (z * z) / 2),
  // Shore's (1982) one-line approximation of the normal quantile, within about 0.01 for q ≥ 1e-7; the
  // Newton steps do the rest.
  guess: (q) => Math.max(1e-3, 5.5556 * (1 - (q / (1 - q)) ** 0.1186)),
};

/** The regularized incomplete beta function I_x(a, b), given x and y = 1 − x separately (no cancellation
 * near 1). The continued fraction of DLMF 8.17.22, on the side where it converges fast (8.17.4 for the other). */
export function regularizedBeta(x: number, y: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - regularizedBeta(y, x, b, a);
  // log x from y when x is near 1 (and the other way round): a · log x must stay exact for a large a.
  const logX = x < 0.5 ? Math.log(x) : Math.log1p(-y);
  const logY = y < 0.5 ? Math.log(y) : Math.log1p(-x);
  const front = Math.exp(a * logX + b * logY - logBeta(a, b)) / a;
  return front * continuedFraction((m) => (m % 2 === 0 ? betaEvenTerm(m / 2, x, a, b) : betaOddTerm((m - 1) / 2, x, a, b)));
}

// DLMF 8.17.22: d_{2m} = m(b − m)x / ((a + 2m − 1)(a + 2m)), d_{2m+1} = −(a + m)(a + b + m)x / ((a + 2m)(a + 2m + 1)).
function betaEvenTerm(m: number, x: number, a: number, b: number): number {
  return (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
}

function betaOddTerm(m: number, x: number, a: number, b: number): number {
  return (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
}

/** 1 / (1 + d1 / (1 + d2 / (1 + …))) by the modified Lentz method, to double precision. */
function continuedFraction(d: (m: number) => number): number {
  const tiny = 1e-300;
  const guard = (v: number): number => (Math.abs(v) < tiny ? tiny : v);
  let c = 1;
  let den = 1 / guard(1 + d(1));
  let value = den;
  for (let m = 2; m < 1_000_000; m += 1) {
    const dm = d(m);
    den = 1 / guard(1 + dm * den);
    c = guard(1 + dm / c);
    const delta = c * den;
    value *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return value;
}

/** The regularized upper incomplete gamma function Q(a, x): the series of P (DLMF 8.11.4) below x = a + 1,
 * Legendre's continued fraction (DLMF 8.9.2) above it. */
export function regularizedGammaUpper(a: number, x: number): number {
  if (x <= 0) return 1;
  const front = Math.exp(a * Math.log(x) - x - logGamma(a));
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 10_000 && Math.abs(term) > Math.abs(sum) * 1e-17; n += 1) {
      term *= x / (a + n);
      sum += term;
    }
    return 1 - front * sum;
  }
  // Q = front / (x + 1 − a − 1(1 − a) / (x + 3 − a − 2(2 − a) / …)), evaluated as the even contraction.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let den = 1 / b;
  let value = den;
  for (let n = 1; n < 10_000; n += 1) {
    const an = -n * (n - a);
    b += 2;
    den = an * den + b;
    if (Math.abs(den) < tiny) den = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    den = 1 / den;
    const delta = den * c;
    value *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return front * value;
}

/** log B(a, b). With one argument large, log Γ(big) − log Γ(big + small) comes from Stirling's series, whose
 * large terms cancel on paper instead of in floating point (t at df 10⁶ would lose four digits otherwise). */
function logBeta(a: number, b: number): number {
  const big = Math.max(a, b);
  const small = Math.min(a, b);
  if (big < 20) return logGamma(a) + logGamma(b) - logGamma(a + b);
  return logGamma(small) - small * Math.log(big) - (big + small - 0.5) * Math.log1p(small / big) + small + stirlingRest(big) - stirlingRest(big + small);
}

/** log Γ(x) − ((x − 1/2) log x − x + log √(2π)), Stirling's series to x⁻⁷ (DLMF 5.11.1): about 1e-15 from x = 20. */
function stirlingRest(x: number): number {
  const x2 = x * x;
  return (1 / 12 - (1 / 360 - (1 / 1260 - 1 / (1680 * x2)) / x2) / x2) / x;
}

// Lanczos' approximation with g = 7 and nine coefficients (about 15 significant digits for x > 0).
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x); // the reflection formula
  const z = x - 1;
  let sum = LANCZOS[0]!;
  for (let i = 1; i < LANCZOS.length; i += 1) sum += LANCZOS[i]! / (z + i);
  const t = z + 7.5;
  return LOG_SQRT_2PI + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

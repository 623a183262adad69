import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logGamma, regularizedBeta, regularizedGammaUpper, studentTQuantile } from '../../src/compare/student-t.js';

const close = (actual: number, expected: number, relative: number, what: string): void => assert.ok(Math.abs(actual / expected - 1) <= relative, `${what}: ${actual}, expected ${expected}`);

test('t quantiles match the published table at df 1, 2, 3, 5, 10, 30, 100 and infinity for 0.95, 0.975 and 0.995', () => {
  // NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2 "Critical Values of the Student's t
  // Distribution" (https://www.itl.nist.gov/div898/handbook/eda/section3/eda3672.htm), upper-tail
  // probabilities 0.05, 0.025 and 0.005, three decimals.
  const table: [number, number, number, number][] = [
    [1, 6.314, 12.706, 63.657],
    [2, 2.92, 4.303, 9.925],
    [3, 2.353, 3.182, 5.841],
    [5, 2.015, 2.571, 4.032],
    [10, 1.812, 2.228, 3.169],
    [30, 1.697, 2.042, 2.75],
    [100, 1.66, 1.984, 2.626],
    [Infinity, 1.645, 1.96, 2.576],
  ];
  for (const [df, ...values] of table) {
    [0.95, 0.975, 0.995].forEach((p, i) => {
      const q = studentTQuantile(p, df);
      assert.ok(Math.abs(q - values[i]!) <= 0.0005, `df ${df}, p ${p}: ${q}, the table says ${values[i]}`);
      assert.equal(studentTQuantile(1 - p, df), -q, `df ${df}, p ${1 - p} is the mirror of p ${p}`);
    });
  }
});

test('t quantiles equal the closed forms at df 1, 2 and 4 across the whole range of p, tails included', () => {
  // df 1 is Cauchy: tan(π(p − 1/2)); df 2: (2p − 1) / √(2p(1 − p)); df 4: 2√(cos(acos(√α)/3)/√α − 1) with
  // α = 4p(1 − p), the sign of p − 1/2 (Shaw, "Sampling Student's T distribution", J. Computational Finance 9(4), 2006).
  for (const p of [1e-10, 1e-6, 0.001, 0.01, 0.025, 0.1, 0.3, 0.45, 0.55, 0.7, 0.9, 0.975, 0.99, 0.999, 1 - 1e-6]) {
    const q = p < 0.5 ? p : 1 - p;
    const sign = p < 0.5 ? -1 : 1;
    close(studentTQuantile(p, 1), sign / Math.tan(Math.PI * q), 1e-12, `df 1, p ${p}`);
    close(studentTQuantile(p, 2), (sign * (1 - 2 * q)) / Math.sqrt(2 * q * (1 - q)), 1e-12, `df 2, p ${p}`);
    const alpha = 4 * q * (1 - q);
    close(studentTQuantile(p, 4), sign * 2 * Math.sqrt(Math.cos(Math.acos(Math.sqrt(alpha)) / 3) / Math.sqrt(alpha) - 1), 1e-11, `df 4, p ${p}`);
  }
});

test('t quantiles at fractional and large df and in the far tails agree with 40-digit values to 1e-12', () => {
  // mpmath 1.3 at 40 digits: the root of ½ I_{ν/(ν+t²)}(ν/2, ½) = the tail, rounded to doubles.
  const reference: [number, number, number][] = [
    [0.975, 1.5, 6.016663104427928],
    [0.9999, 3, 22.203742273205002],
    [0.025, 13.7, -2.1492012622298096],
    [0.6, 30, 0.2556053649519127],
    [0.995, 1000, 2.5807546980659506],
    [0.999, 100000, 3.0903138094272373],
    [1e-9, 0.5, -1.0284911563163398e17],
    [1e-12, 0.1, -1.6044257056665455e116],
  ];
  for (const [p, df, value] of reference) close(studentTQuantile(p, df), value, 1e-12, `p ${p}, df ${df}`);
});

test('a t quantile is 0 at p 0.5, infinite at 0 and 1, and NaN for a p outside [0, 1] or a df that is not positive', () => {
  assert.equal(studentTQuantile(0.5, 7), 0);
  assert.equal(studentTQuantile(0, 7), -Infinity);
  assert.equal(studentTQuantile(1, 7), Infinity);
  for (const [p, df] of [
    [1.2, 3],
    [-0.1, 3],
    [NaN, 3],
    [0.975, 0],
    [0.975, -1],
    [0.975, NaN],
  ] as const)
    assert.ok(Number.isNaN(studentTQuantile(p, df)), `p ${p}, df ${df}`);
});

test('log Γ is exact at the integers and the halves', () => {
  let logFactorial = 0;
  for (let n = 1; n <= 30; n += 1) {
    assert.ok(Math.abs(logGamma(n) - logFactorial) <= 1e-13 * Math.max(1, logFactorial), `log Γ(${n}): ${logGamma(n)}, expected log ${n - 1}!`);
    logFactorial += Math.log(n);
  }
  close(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-14, 'log Γ(1/2) = log √π');
  close(logGamma(0.25), Math.log(3.625609908221908), 1e-14, 'log Γ(1/4)');
  close(logGamma(100.5), 361.4355404677776, 1e-14, 'log Γ(100.5)');
});

test('the incomplete beta and gamma functions equal their closed forms', () => {
  for (const x of [0.001, 0.2, 0.5, 0.7, 0.999]) {
    close(regularizedBeta(x, 1 - x, 1, 1), x, 1e-14, `I_${x}(1, 1) = x`);
    close(regularizedBeta(x, 1 - x, 3.5, 1), x ** 3.5, 1e-13, `I_${x}(3.5, 1) = x^3.5`);
    close(regularizedBeta(x, 1 - x, 1, 2.5), 1 - (1 - x) ** 2.5, 1e-13, `I_${x}(1, 2.5)`);
  }
  for (const x of [0.01, 0.5, 1, 2, 10, 50]) close(regularizedGammaUpper(1, x), Math.exp(-x), 1e-13, `Q(1, ${x}) = e^-x`);
  assert.equal(regularizedBeta(0, 1, 2, 3), 0);
  assert.equal(regularizedBeta(1, 0, 2, 3), 1);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixedDigits } from '../../src/util/index.js';

test("fixedDigits writes what toLocaleString('en-US') with that many decimals writes, formatter reused or not", () => {
  const values = [0, -0, 1, -1.5, 0.125, 2.675, 999.9999, 1234.5, 1_234_567.891, -98_765.4321, 1e21, Number.NaN, Infinity];
  for (const digits of [0, 1, 2, 3, 0, 2])
    for (const v of values) assert.equal(fixedDigits(v, digits), v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }), `${v} with ${digits}`);
  assert.equal(fixedDigits(1234.5, 2), '1,234.50');
});

// partitionPoint: the first index where a prefix predicate stops holding, on sorted data with ties, empty
// input and typed arrays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { partitionPoint } from '../../src/util/index.js';

test('partitionPoint: first at or after (x < v) and first past (x <= v), with ties, ends and empty input', () => {
  const xs = [1, 2, 2, 2, 5];
  assert.equal(
    partitionPoint(xs, (x) => x < 2),
    1,
  );
  assert.equal(
    partitionPoint(xs, (x) => x <= 2),
    4,
  );
  assert.equal(
    partitionPoint(xs, (x) => x < 0),
    0,
  );
  assert.equal(
    partitionPoint(xs, (x) => x < 9),
    5,
  );
  assert.equal(
    partitionPoint([], () => true),
    0,
  );
  assert.equal(
    partitionPoint(Float64Array.from([0.5, 1.5, 2.5]), (x) => x < 2),
    2,
  );
});

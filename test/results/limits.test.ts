import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_THRESHOLDS } from '../../src/analysis/index.js';
import { runThresholds } from '../../src/results/limits.js';

test('a run is judged again by its own limits; a run.json of another version keeps every limit it can read, says so, and the defaults stand for the rest', () => {
  const notes: string[] = [];
  assert.deepEqual(runThresholds({}, notes), DEFAULT_THRESHOLDS);
  const own = runThresholds({ thresholds: { ...DEFAULT_THRESHOLDS, error_rate: 0.05, ttft_p99_ms: 800 } }, notes);
  assert.equal(own.error_rate, 0.05);
  assert.equal(own.ttft_p99_ms, 800);
  assert.deepEqual(notes, []);
  const newer = runThresholds({ thresholds: { hangs: null, error_rate: 0.02, e2e_p99_ms: 9000, limit_from_the_future: 1 } }, notes);
  assert.equal(newer.hangs, null, 'hangs: null (not checked) kept');
  assert.equal(newer.error_rate, 0.02);
  assert.equal(newer.e2e_p99_ms, 9000);
  assert.equal(newer.ttft_p99_ms, DEFAULT_THRESHOLDS.ttft_p99_ms);
  assert.equal(notes.length, 1);
  assert.match(notes[0]!, /not all readable by this version/);
  const noHangs = runThresholds({ thresholds: { error_rate: 'high', unknown: true } }, []);
  assert.equal(noHangs.hangs, 0, 'a hang still fails when the limit is unreadable');
  assert.equal(noHangs.error_rate, DEFAULT_THRESHOLDS.error_rate);
});

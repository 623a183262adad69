import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HistogramSet, LatencyHistogram } from '../../src/metrics/index.js';

test('percentiles of recorded latencies are within the 3-digit precision', () => {
  const h = new LatencyHistogram();
  for (let i = 1; i <= 1000; i += 1) h.recordMs(i);
  const p = h.percentiles();
  assert.equal(p.count, 1000);
  assert.ok(Math.abs(p.p50_ms - 500) <= 1, `p50 ${p.p50_ms}`);
  assert.ok(Math.abs(p.p99_ms - 990) <= 1.5, `p99 ${p.p99_ms}`);
  assert.ok(Math.abs(p.max_ms - 1000) <= 1);
});

test('an encoded histogram decodes to the same percentiles', () => {
  const h = new LatencyHistogram();
  for (let i = 0; i < 500; i += 1) h.recordMs(0.5 + i * 0.37);
  const back = LatencyHistogram.decode(h.encode());
  assert.deepEqual(back.percentiles(), h.percentiles());
});

test('merging two sets equals recording everything into one', () => {
  const a = new HistogramSet();
  const b = new HistogramSet();
  const both = new HistogramSet();
  for (let i = 0; i < 300; i += 1) {
    const v = (i * 7.3) % 400;
    (i % 2 === 0 ? a : b).recordMs('ttft', 'main', 1 + (i % 3), v);
    both.recordMs('ttft', 'main', 1 + (i % 3), v);
  }
  const merged = HistogramSet.fromFile(JSON.parse(JSON.stringify(a.toFile())) as ReturnType<typeof a.toFile>);
  merged.merge(HistogramSet.fromFile(b.toFile()));
  for (const round of [0, 1, 2, 3]) assert.deepEqual(merged.percentiles('ttft', 'main', round), both.percentiles('ttft', 'main', round));
});

test('negative and non-finite latencies are ignored, not recorded', () => {
  const h = new LatencyHistogram();
  h.recordMs(-1);
  h.recordMs(Number.NaN);
  h.recordMs(Infinity);
  assert.equal(h.count, 0);
});

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

/** A seeded stream of latencies spread over five rounds of two phases: what a run records. */
function* latencies(n: number): Generator<{ phase: string; round: number; ms: number }> {
  let x = 12345;
  for (let i = 0; i < n; i += 1) {
    x = (x * 1103515245 + 12345) % 2147483648;
    // Mostly small gaps, a few long stalls: the tail is what p99 reads.
    const ms = x % 100 === 0 ? 500 + (x % 9000) : (x % 40_000) / 997;
    yield { phase: i % 3 === 0 ? 'c8' : 'c16', round: 1 + (x % 5), ms };
  }
}

test('the all-rounds histogram derived from the rounds equals what recording every value twice gave', () => {
  const set = new HistogramSet();
  // The former hot path: each value into its round's histogram and into the phase's all-rounds one.
  const double = new Map<string, LatencyHistogram>();
  const at = (key: string): LatencyHistogram => double.get(key) ?? double.set(key, new LatencyHistogram()).get(key)!;
  for (const { phase, round, ms } of latencies(20_000)) {
    set.recordMs('itl', phase, round, ms);
    at(`${phase}/${round}`).recordMs(ms);
    at(`${phase}/0`).recordMs(ms);
  }
  const written = HistogramSet.fromFile(JSON.parse(JSON.stringify(set.toFile())) as ReturnType<HistogramSet['toFile']>);
  for (const phase of ['c8', 'c16']) {
    for (const round of [0, 1, 2, 3, 4, 5]) {
      const want = at(`${phase}/${round}`).percentiles();
      assert.deepEqual(set.percentiles('itl', phase, round), want, `${phase} round ${round}`);
      assert.deepEqual(written.percentiles('itl', phase, round), want, `${phase} round ${round}, through histograms.json`);
    }
  }
  assert.equal(set.get('itl', 'c8', 0).count + set.get('itl', 'c16', 0).count, 20_000, 'every value once in the all-rounds figures');
  // histograms.json keeps its form: each round, and each phase's all-rounds histogram with every value.
  const file = set.toFile();
  assert.deepEqual(
    file.histograms
      .filter((h) => h.round === 0)
      .map((h) => [h.phase, h.count])
      .sort(),
    [
      ['c16', at('c16/0').count],
      ['c8', at('c8/0').count],
    ].sort(),
  );
});

test('a value recorded without a round counts once, and histograms.json written by the double recording reads back without double counting', () => {
  const set = new HistogramSet();
  set.recordMs('itl', 'main', 0, 40);
  set.recordMs('itl', 'main', 1, 10);
  assert.equal(set.get('itl', 'main', 0).count, 2);
  assert.equal(set.get('itl', 'main', 1).count, 1);
  // Through the file and merged with itself: the value without a round stays apart from round 1.
  const twice = HistogramSet.fromFile(set.toFile());
  twice.merge(HistogramSet.fromFile(set.toFile()));
  assert.equal(twice.get('itl', 'main', 0).count, 4);
  assert.equal(twice.get('itl', 'main', 1).count, 2);
  assert.ok(Math.abs(twice.percentiles('itl', 'main', 0).max_ms - 40) < 0.1);

  // A file written before: round 0 held every round's values again.
  const round1 = new LatencyHistogram();
  const all = new LatencyHistogram();
  for (const ms of [5, 6, 7, 300]) {
    round1.recordMs(ms);
    all.recordMs(ms);
  }
  const old = HistogramSet.fromFile({
    version: 1,
    unit: 'us',
    histograms: [
      { metric: 'ttft', phase: 'main', round: 1, count: round1.count, encoded: round1.encode() },
      { metric: 'ttft', phase: 'main', round: 0, count: all.count, encoded: all.encode() },
    ],
  });
  old.merge(HistogramSet.fromFile(old.toFile()));
  assert.equal(old.get('ttft', 'main', 0).count, 8);
  assert.equal(old.get('ttft', 'main', 1).count, 8);
  assert.deepEqual(old.percentiles('ttft', 'main', 0), old.percentiles('ttft', 'main', 1));
});

test('merging one metric leaves the others alone', () => {
  const a = new HistogramSet();
  a.recordMs('itl', 'main', 1, 3);
  a.recordMs('ttft', 'main', 1, 30);
  const b = new HistogramSet();
  b.merge(a, 'itl');
  assert.equal(b.get('itl', 'main', 0).count, 1);
  assert.equal(b.has('ttft', 'main', 0), false);
});

test("histograms are built from hdr-histogram-js's own files as its index's build() builds them: the same encoding, value for value", async () => {
  const hdr = await import('hdr-histogram-js');
  const values = Array.from({ length: 3000 }, (_, i) => Math.round((1 + ((i * 7919) % 997)) * (1 + (i % 13)) * 37.3));
  const ours = new LatencyHistogram();
  // Ours starts at the smallest range and grows with its values.
  const theirs = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 4096, numberOfSignificantValueDigits: 3, autoResize: true });
  for (const us of values) {
    ours.recordMs(us / 1000);
    theirs.recordValue(us);
  }
  ours.recordMs(7_200_000); // past the highest value: clamped to one hour, as the index's histogram with autoResize holds it
  theirs.recordValue(3_600_000_000);
  assert.equal(ours.encode(), hdr.encodeIntoCompressedBase64(theirs));
  const back = hdr.decodeFromCompressedBase64(ours.encode());
  assert.equal(back.totalCount, values.length + 1);
  assert.equal(LatencyHistogram.decode(hdr.encodeIntoCompressedBase64(theirs)).encode(), ours.encode());
});

test("percentiles() gives hdr-histogram-js's own getValueAtPercentile and mean, exactly: one value, spread ones, repeats, a decoded histogram and one less another", async () => {
  const hdr = await import('hdr-histogram-js');
  const theirsOf = (values: number[]) => {
    const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3, autoResize: true });
    for (const us of values) h.recordValue(us);
    return h;
  };
  const expected = (h: ReturnType<typeof theirsOf>) => {
    const ms = (us: number) => Math.round((us / 1000) * 1000) / 1000;
    const p = (q: number) => ms(h.getValueAtPercentile(q));
    return { count: h.totalCount, p50_ms: p(50), p90_ms: p(90), p99_ms: p(99), max_ms: p(100), mean_ms: ms(h.mean) };
  };
  const spread = Array.from({ length: 5000 }, (_, i) => Math.round((1 + ((i * 7919) % 997)) * (1 + (i % 13)) * 37.3));
  const cases: [string, number[]][] = [
    ['one value', [123_456]],
    ['spread values', spread],
    ['repeats', Array.from({ length: 999 }, (_, i) => [1, 2_000, 2_001, 90_000_000][i % 4]!)],
    ['ten values (p99 and max in the same bucket)', Array.from({ length: 10 }, (_, i) => 1000 * (i + 1))],
  ];
  for (const [name, values] of cases) {
    const ours = new LatencyHistogram();
    for (const us of values) ours.recordMs(us / 1000);
    assert.deepEqual(ours.percentiles(), expected(theirsOf(values)), name);
    assert.deepEqual(LatencyHistogram.decode(ours.encode()).percentiles(), expected(theirsOf(values)), `${name}, decoded`);
  }
  const all = new LatencyHistogram();
  const part = new LatencyHistogram();
  for (const [i, us] of spread.entries()) {
    all.recordMs(us / 1000);
    if (i % 3 === 0) part.recordMs(us / 1000);
  }
  assert.deepEqual(all.minus(part).percentiles(), expected(theirsOf(spread.filter((_, i) => i % 3 !== 0))), 'one less another');
  assert.deepEqual(new LatencyHistogram().percentiles(), { count: 0, p50_ms: 0, p90_ms: 0, p99_ms: 0, max_ms: 0, mean_ms: 0 });
});

test('a histogram starting at a small range and growing with its values reads as one built to an hour: the same percentiles, merged either way, and histograms.json of the full range reads', async () => {
  const hdr = await import('hdr-histogram-js');
  const values = [3, 870, 4_095, 4_097, 65_000, 1_234_567, 98_765_432, 3_500_000_000];
  const ours = new LatencyHistogram();
  const full = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3, autoResize: true });
  for (const us of values) {
    ours.recordMs(us / 1000);
    full.recordValue(us);
  }
  const fromFull = LatencyHistogram.decode(hdr.encodeIntoCompressedBase64(full));
  assert.deepEqual(ours.percentiles(), fromFull.percentiles());
  // A small one (ITLs) merged into a decoded full-range one, and a full-range one into a small one.
  const small = new LatencyHistogram();
  small.recordMs(0.02);
  small.recordMs(12);
  const intoFull = LatencyHistogram.decode(hdr.encodeIntoCompressedBase64(full));
  intoFull.add(small);
  const intoSmall = new LatencyHistogram();
  intoSmall.add(small);
  intoSmall.add(fromFull);
  assert.deepEqual(intoFull.percentiles(), intoSmall.percentiles());
  assert.equal(intoSmall.count, values.length + 2);
  // A decoded small one grows when more is added into it.
  const decodedSmall = LatencyHistogram.decode(small.encode());
  decodedSmall.add(fromFull);
  assert.deepEqual(decodedSmall.percentiles(), intoSmall.percentiles());
  assert.deepEqual(intoSmall.minus(small).percentiles(), ours.percentiles());
});

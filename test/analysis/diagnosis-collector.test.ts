import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DiagnosisCollector, KEEP_LIMITS } from '../../src/analysis/diagnosis/collector.js';
import { episodesOf, tallyError, type EpisodeTally } from '../../src/analysis/diagnosis/episodes.js';
import { FailureKeeper, type KeepLimits } from '../../src/analysis/diagnosis/failure-keeper.js';
import type { ErrorSpan } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { plainRecord } from '../report/fixtures.js';
import { error } from './diagnosis-fixtures.js';

const HOUR_MS = 3_600_000;

function failed(runMs: number, cls: string, status: number | null, body: 'json' | 'page' | undefined = undefined): RequestRecord {
  return plainRecord({
    run_ms: runMs,
    e2e_ms: 5,
    status: 'error',
    http_status: status,
    ttft_ms: null,
    completion_tokens: null,
    error: { class: cls, message: status === null ? 'connect ECONNREFUSED 127.0.0.1:8080' : `HTTP ${status}: bad gateway`, code: null, ...(body === undefined ? {} : { body }) },
  });
}

function keeper(limits: Partial<KeepLimits> = {}): FailureKeeper<ErrorSpan> {
  return new FailureKeeper('errors', { ...KEEP_LIMITS, ...limits }, tallyError);
}

const total = (tallies: readonly EpisodeTally[]): number => tallies.reduce((n, t) => n + t.count, 0);

test('50,000 errors in the first hour then a different cause at hour 6: the late one is its own episode, with exact counts and times', () => {
  const c = new DiagnosisCollector(false);
  // One cause (the engine refusing) every 72 ms through the first hour...
  for (let i = 0; i < 50_000; i += 1) c.add(failed(i * 72, 'connection_refused', null));
  // ...then, at hour 6, the proxy answering 502 pages for 30 s: 300 of them.
  const late = 6 * HOUR_MS;
  for (let i = 0; i < 300; i += 1) c.add(failed(late + i * 100, 'http_5xx', 502, 'page'));
  const d = c.diagnose([]);
  const eps = d.episodes ?? [];
  assert.equal(eps.length, 2);
  const [early, last] = eps;
  assert.equal(early!.requests, 50_000);
  assert.equal(early!.start_ms, 0);
  assert.equal(early!.end_ms, 49_999 * 72 + 5);
  assert.equal(last!.requests, 300);
  assert.equal(last!.start_ms, late);
  assert.equal(last!.end_ms, late + 299 * 100 + 5);
  assert.match(last!.facts[0]!, /^300 requests failed from 21600\.0 s to 21629\.9 s of the run \(by class: http_5xx 300; HTTP 502 300; by path: direct 300\)/);
  assert.match(early!.facts[0]!, /^50000 requests failed .*by class: connection_refused 50000/);
  const said = d.evidence.find((e) => e.startsWith('judged from'));
  assert.ok(said !== undefined, d.evidence.join('\n'));
  const m = /^judged from (\d+) of 50300 failures: a sample across the run plus the first and last of each episode$/.exec(said);
  assert.ok(m !== null, said);
  // The sample, the first 20 and last 20 of each episode (the late one's 300 are partly in the sample too).
  assert.ok(Number(m[1]) <= KEEP_LIMITS.sample + 4 * KEEP_LIMITS.edge, said);
  assert.ok(Number(m[1]) > KEEP_LIMITS.sample, said);
});

test('a run with more stretches than are kept apart says how many merged, and its counts stay exact', () => {
  const c = new DiagnosisCollector(false, { sample: 5, edge: 2, stretches: 3 });
  // Ten bursts of 10 refused connections, 10 s apart.
  for (let burst = 0; burst < 10; burst += 1) for (let i = 0; i < 10; i += 1) c.add(failed(burst * 10_000 + i * 10, 'connection_refused', null));
  const d = c.diagnose([]);
  assert.equal(
    (d.episodes ?? []).reduce((n, e) => n + e.requests, 0),
    100,
  );
  assert.equal((d.episodes ?? []).length, 3);
  assert.ok(
    d.evidence.some((e) =>
      /^judged from \d+ of 100 failures: a sample across the run plus the first and last of each episode \(7 stretches merged into their nearest neighbour, past the most kept apart; counts exact\)$/.test(
        e,
      ),
    ),
    d.evidence.join('\n'),
  );
});

test('a short run whose failures were all kept says nothing of a sample', () => {
  const c = new DiagnosisCollector(false);
  for (let i = 0; i < 40; i += 1) c.add(failed(1000 + i * 50, 'connection_refused', null));
  const d = c.diagnose([]);
  assert.deepEqual(
    (d.episodes ?? []).map((e) => e.requests),
    [40],
  );
  assert.ok(!d.evidence.some((e) => /judged from|sample/.test(e)), d.evidence.join('\n'));
});

test('the collector lowered to a sample of 3 and 3 at each end still gives every episode its exact counts, and says what it kept', () => {
  const c = new DiagnosisCollector(false, { sample: 3, edge: 3 });
  for (let i = 0; i < 100; i += 1) c.add(failed(i * 100, 'connection_refused', null));
  for (let i = 0; i < 50; i += 1) c.add(failed(60_000 + i * 100, 'http_5xx', 503, 'json'));
  const d = c.diagnose([]);
  assert.deepEqual(
    (d.episodes ?? []).map((e) => [e.start_ms, e.end_ms, e.requests]),
    [
      [0, 9905, 100],
      [60_000, 64_905, 50],
    ],
  );
  assert.ok(
    d.evidence.some((e) => /^judged from (1[2-5]) of 150 failures: a sample across the run plus the first and last of each episode$/.test(e)),
    d.evidence.join('\n'),
  );
});

test('memory stays bounded: 100,000 failures in 2,000 bursts keep at most the sample plus each kept stretch’s ends, and every count', () => {
  const k = keeper({ sample: 100, edge: 5, stretches: 10 });
  for (let burst = 0; burst < 2000; burst += 1) for (let i = 0; i < 50; i += 1) k.add(error(burst * 10_000 + i * 10, 'connection_reset'));
  assert.equal(k.total, 100_000);
  assert.ok(k.kept().length <= 100 + 10 * 2 * 5, String(k.kept().length));
  assert.equal(k.tallies().length, 10);
  assert.equal(total(k.tallies()), 100_000);
  assert.equal(k.merged, 1990);
  // Merged stretches still cover the run end to end.
  const from = Math.min(...k.tallies().map((t) => t.from_ms));
  const to = Math.max(...k.tallies().map((t) => t.to_ms));
  assert.deepEqual([from, to], [0, 1999 * 10_000 + 49 * 10 + 2]);
});

test('with no sample, a stretch keeps exactly its first 3 and its last 3 failures, and a merge keeps the first of the earlier and the last of the later', () => {
  const k = keeper({ sample: 0, edge: 3, stretches: 1 });
  for (let i = 0; i < 100; i += 1) k.add(error(i * 10, 'x'));
  assert.deepEqual(
    k.kept().map((s) => s.from_ms),
    [0, 10, 20, 970, 980, 990],
  );
  for (let i = 0; i < 2; i += 1) k.add(error(10_000 + i * 10, 'y'));
  assert.equal(k.merged, 1);
  assert.deepEqual(
    k.kept().map((s) => s.from_ms),
    [0, 10, 20, 990, 10_000, 10_010],
  );
  assert.deepEqual(
    k.tallies().map((t) => [t.from_ms, t.to_ms, t.count]),
    [[0, 10_012, 102]],
  );
});

test('past the most stretches kept apart, the two closest in time merge and the far one stays alone', () => {
  const k = keeper({ stretches: 2 });
  k.add(error(0, 'a'));
  k.add(error(10_000, 'b'));
  // 4 s after the second: closer to it than it is to the first, so those two merge.
  k.add(error(14_000, 'c'));
  assert.equal(k.merged, 1);
  const t = k.tallies().sort((x, y) => x.from_ms - y.from_ms);
  assert.deepEqual(
    t.map((x) => [x.from_ms, x.to_ms, x.count]),
    [
      [0, 2, 1],
      [10_000, 14_002, 2],
    ],
  );
});

test('the sample is reproducible and spread across the whole run, not its start', () => {
  const a = keeper({ sample: 1000, edge: 1 });
  const b = keeper({ sample: 1000, edge: 1 });
  for (let i = 0; i < 100_000; i += 1) {
    a.add(error(i * 10, 'x'));
    b.add(error(i * 10, 'x'));
  }
  const kept = a.kept();
  assert.deepEqual(
    kept.map((s) => s.from_ms),
    b.kept().map((s) => s.from_ms),
  );
  // Each quarter of the run holds about a quarter of the sample (1000 of 100,000: 250 ± 3 standard deviations).
  for (let q = 0; q < 4; q += 1) {
    const n = kept.filter((s) => s.from_ms >= q * 250_000 && s.from_ms < (q + 1) * 250_000).length;
    assert.ok(n > 200 && n < 300, `quarter ${q}: ${n}`);
  }
});

test('episodes built from tallies take their stretch and counts from the tallies, and each kept span joins the stretch it started in', () => {
  const k = keeper({ sample: 2, edge: 2 });
  const spans = [...Array.from({ length: 30 }, (_, i) => error(i * 500, 'early')), ...Array.from({ length: 30 }, (_, i) => error(100_000 + i * 500, 'late'))];
  for (const s of spans) k.add(s);
  const eps = episodesOf([], k.kept(), 3000, k.tallies());
  assert.deepEqual(
    eps.map((e) => [e.from_ms, e.to_ms, e.tally?.count, e.errors.every((x) => x.class === (e.from_ms === 0 ? 'early' : 'late'))]),
    [
      [0, 14_502, 30, true],
      [100_000, 114_502, 30, true],
    ],
  );
  // Built from all the spans, the same two episodes.
  assert.deepEqual(
    episodesOf([], spans, 3000).map((e) => [e.from_ms, e.to_ms, e.errors.length]),
    [
      [0, 14_502, 30],
      [100_000, 114_502, 30],
    ],
  );
});

test("stretches streamed 3 s apart join into one episode at the judge's wider gap, their counts added", () => {
  const k = keeper();
  for (const at of [0, 4000, 8000]) for (let i = 0; i < 10; i += 1) k.add(error(at + i * 10, 'x'));
  assert.equal(k.tallies().length, 3);
  const eps = episodesOf([], k.kept(), 5000, k.tallies());
  assert.deepEqual(
    eps.map((e) => [e.from_ms, e.to_ms, e.tally?.count, e.errors.length]),
    [[0, 8092, 30, 30]],
  );
});

test('for any stream, arriving about in order of their ends, the episodes built from tallies and a small sample are those built from every failure', () => {
  // A seeded stream: bursts of short failures and long ones that started well before they ended.
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let round = 0; round < 20; round += 1) {
    const spans: ErrorSpan[] = [];
    let at = 0;
    for (let i = 0; i < 400; i += 1) {
      at += random() < 0.05 ? 2000 + random() * 8000 : random() * 300;
      const long = random() < 0.1 ? random() * 6000 : 5;
      spans.push({ ...error(at, 'x'), to_ms: at + long });
    }
    // Mostly in order of their ends; one in 20 recorded up to 15 s late.
    const arrival = new Map(spans.map((sp) => [sp, sp.to_ms + (random() < 0.05 ? random() * 15_000 : 0)]));
    spans.sort((a, b) => arrival.get(a)! - arrival.get(b)!);
    const k = keeper({ sample: 5, edge: 2 });
    for (const s of spans) k.add(s);
    for (const gap of [3000, 5000]) {
      assert.deepEqual(
        episodesOf([], k.kept(), gap, k.tallies()).map((e) => [e.from_ms, e.to_ms, e.tally?.count]),
        episodesOf([], spans, gap).map((e) => [e.from_ms, e.to_ms, e.errors.length]),
        `round ${round}, gap ${gap}`,
      );
    }
  }
});

test('the collector keeps what completed requests were (a uniform sample) and what the failed ones were: the size that separates them is named', () => {
  const c = new DiagnosisCollector(true);
  for (let i = 0; i < 300; i += 1) c.add(plainRecord({ run_ms: i * 100, request_bytes: 1000 + (i % 30) * 100, ttft_ms: 50 }));
  for (let i = 0; i < 12; i += 1) {
    c.add(
      plainRecord({
        run_ms: 10_000 + i * 200,
        e2e_ms: 1500,
        request_bytes: 50_000 + i,
        status: 'error',
        ttft_ms: null,
        completion_tokens: null,
        error: { class: 'timeout', message: 'timed out', code: null },
      }),
    );
  }
  const d = c.diagnose([]);
  assert.match(JSON.stringify(d), /the request body size \(bytes\) separates the 12 failed requests from 300 completed ones: median 5000\d against 2\d00, the failed larger in 100% of pairs/);
});

// The diagnosis's former dead zones (issue 33): a proxy's own error page read against what was seen of the
// engine, canary legs judged by one test over every pair of rates, and direct canaries keeping their weight
// beside a path timeout. Each test is the measured misreading and the call it now makes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type CanaryPoint, type DiagnosisInput, type ErrorSpan } from '../../src/analysis/index.js';
import type { Diagnosis, PathKind } from '../../src/types/index.js';
import { activity, canaries, client, error, flow, inside, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 60_000;
const text = (d: Diagnosis): string => d.evidence.join('\n');
const DOWN = { from: 30_000, to: 45_000 };

/** nginx answering 502 at once (its upstream unreachable) every 100 ms through DOWN. */
function pages502(status = 502): ErrorSpan[] {
  const out: ErrorSpan[] = [];
  for (let ms = DOWN.from; ms < DOWN.to; ms += 100) {
    out.push(error(ms, 'http_5xx', { http_status: status, answered_by: 'page', detail: `${status} Bad Gateway nginx`, headers_ms: 2, last_byte_ms: 2 }));
  }
  return out;
}

/** The 502 storm with nothing else known unless `extra` says it. */
function storm(extra: Partial<DiagnosisInput> = {}): DiagnosisInput {
  return { path: 'proxy', hangs: [], errors: pages502(), canaries: [], gauges: [], client: client(RUN_MS), ...extra };
}

/** An engine scraped every 250 ms that answers throughout; its counters still while no request reaches it. */
const answeringEngine = (): Partial<DiagnosisInput> => ({ scrapes: scrapes('engine', RUN_MS, 250, []), flows: [flow('engine', RUN_MS, 250, [DOWN])] });

test('nginx answering 502 at once while the engine answers its scrapes is proxy, not engine, and less than sure without canaries', () => {
  const d = diagnose(storm(answeringEngine()));
  assert.equal(d.verdict, 'proxy', text(d));
  assert.ok((d.confidence ?? 1) < 0.6, `confidence ${d.confidence}`);
  const e = d.episodes![0]!;
  assert.ok((e.scores.engine ?? 0) < 0, JSON.stringify(e.scores));
  assert.match(
    e.evidence_for.join('\n'),
    /the proxy answered 150 requests itself with an error page \(HTTP 502\).*while engine answered all \d+ scrapes.*the proxy could not reach an engine seen answering: its upstream address or port/,
  );
  assert.match(e.evidence_for.join('\n'), /canaries \(target\.bypass.*would settle it/);
});

test('the same pages while the counters move (other traffic through the engine) are proxy, firmly', () => {
  const d = diagnose(storm({ scrapes: scrapes('engine', RUN_MS, 250, []), flows: [flow('engine', RUN_MS, 250, [])] }));
  assert.equal(d.verdict, 'proxy', text(d));
  assert.ok((d.confidence ?? 0) >= 0.6, `confidence ${d.confidence}`);
});

test('the same pages with direct canaries all fine and proxied ones all 502 are proxy at 0.6 or more', () => {
  const proxied = canaries('proxied', RUN_MS, 1000, (ms) => (inside(ms, [DOWN]) ? 'page503' : 'ok')).map((c) => (c.http_status === 503 ? { ...c, http_status: 502 } : c));
  const d = diagnose(storm({ canaries: [...canaries('direct', RUN_MS, 1000, () => 'ok'), ...proxied] }));
  assert.equal(d.verdict, 'proxy', text(d));
  assert.ok((d.confidence ?? 0) >= 0.6, `confidence ${d.confidence}`);
  assert.match(text(d), /requests that skip the proxy got through/);
});

test('the same pages with nothing seen of the engine are unknown, saying which measurement would tell', () => {
  const d = diagnose(storm());
  assert.equal(d.verdict, 'unknown', text(d));
  assert.match(text(d), /nothing seen of the engine tells which: run canaries \(target\.bypass.*monitor\.canary_interval_s\) or the engine scraped \(monitor\.targets\)/);
});

test('the same pages while the engine is seen failing (its /metrics silent) are engine, the page counted for it', () => {
  const d = diagnose(storm({ scrapes: scrapes('engine', RUN_MS, 250, [DOWN]), flows: [flow('engine', RUN_MS, 250, [DOWN])] }));
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /error page \(HTTP 502\).*and the engine was seen failing \(engine's \/metrics did not answer/);
});

/** Canary legs over a 14-slot episode: the first `failed` slots of each leg failed (hung). */
function legs(direct: number, proxied: number, slots = 14): CanaryPoint[] {
  const leg = (name: 'direct' | 'proxied', failed: number, path: PathKind): CanaryPoint[] =>
    canaries(name, RUN_MS, 1000, (ms) => (ms >= 30_000 && ms < 30_000 + failed * 1000 ? 'hang' : 'ok'), path).filter((c) => c.run_ms < 30_000 || c.run_ms < 30_000 + slots * 1000);
  return [...leg('direct', direct, 'direct'), ...leg('proxied', proxied, 'proxy')];
}

/** Hangs at headers through the 14 s of the canary episode, nothing else known. */
function hungWith(c: CanaryPoint[]): DiagnosisInput {
  const hangs = [];
  for (let ms = 30_000; ms + 1500 <= 44_000; ms += 500) hangs.push({ from_ms: ms, to_ms: ms + 1500, phase: 'headers' as const, path: 'proxy' as const, nth: 2, deadline_ms: 1500, request_id: null });
  return { path: 'proxy', hangs, canaries: c, gauges: [], client: client(RUN_MS) };
}

test('direct 4 of 14 failed and proxied 13 of 14 (p = 0.0007) differ: proxy, no longer "the legs do not differ"', () => {
  const d = diagnose(hungWith(legs(4, 13)));
  const e = d.episodes![0]!;
  assert.equal(e.canaries?.direct.failed, 4, JSON.stringify(e.canaries));
  assert.equal(e.canaries?.proxied.failed, 13);
  assert.equal(d.verdict, 'proxy', text(d));
  assert.match(text(d), /proxied canaries failed in 13 of \d+ slots and direct ones in 4 of \d+ \(one-sided Fisher exact test, p = 0\.000\d\): requests that skip the proxy failed too, but far less/);
  // Direct ones failing too is no word against the engine.
  assert.equal(e.scores.engine, undefined, JSON.stringify(e.scores));
});

test('a direct failure rate between 0.25 and 0.30 has a branch: alike with the proxied leg counts for the engine, far below it the proxy', () => {
  const alike = diagnose(hungWith(legs(4, 5, 15)));
  assert.equal(alike.episodes![0]!.canaries?.direct.failed, 4);
  assert.match(text(alike), /direct canaries failed as often as proxied ones \(direct 4 of \d+, proxied 5 of/);
  // Without scrapes, engine and engine_overloaded tie on it (a stopped or a full engine): the vote is what is pinned.
  const scores = alike.episodes![0]!.scores;
  assert.ok((scores.engine ?? 0) >= 3 && (scores.proxy ?? 0) <= -3, JSON.stringify(scores));
  assert.notEqual(alike.verdict, 'proxy', text(alike));
  const apart = diagnose(hungWith(legs(4, 14, 15)));
  assert.equal(apart.verdict, 'proxy', text(apart));
});

test('direct canaries failing more than proxied ones point at the direct route only, never at the engine or the proxy', () => {
  const d = diagnose(hungWith(legs(12, 0)));
  assert.match(text(d), /direct canaries failed more than proxied ones .*something on the direct route only \(the target\.bypass URL/);
  const e = d.episodes![0]!;
  assert.equal(e.scores.engine, undefined, JSON.stringify(e.scores));
  assert.equal(e.scores.proxy, undefined, JSON.stringify(e.scores));
});

/** An engine frozen behind nginx with proxy_read_timeout 2s: 504s at 2.0 s, both canary legs hung, no scrape targets. */
function frozenBehindTimeout(flowing: boolean): DiagnosisInput {
  const frozen = [{ from: 1000, to: 28_000 }];
  const errors = [0, 12, -20, 5, 20, -7, 3, -15, 9].map((j, i) =>
    error(1000 + i * 3000, 'http_5xx', { to_ms: 3000 + i * 3000 + j, http_status: 504, answered_by: 'page', detail: '504 Gateway Time-out nginx', headers_ms: 2000 + j, last_byte_ms: 2000 + j }),
  );
  const same = (ms: number): 'hang' | 'ok' => (inside(ms, frozen) ? 'hang' : 'ok');
  return {
    path: 'proxy',
    hangs: [],
    errors,
    canaries: [...canaries('direct', 30_000, 1000, same), ...canaries('proxied', 30_000, 1000, same)],
    gauges: [],
    client: client(30_000),
    activity: activity(steadyRequests(30_000, flowing ? [] : frozen)),
  };
}

test('an engine frozen behind a 2 s proxy timeout with no scrape targets is engine: both canary legs failing count, the timeout named as what the agents saw', () => {
  const d = diagnose(frozenBehindTimeout(false));
  assert.equal(d.verdict, 'engine', text(d));
  assert.equal(d.path_timeout?.seconds, 2);
  const e = d.episodes![0]!;
  assert.match(e.evidence_for.join('\n'), /direct canaries failed as often as proxied ones/);
  assert.match(e.evidence_for.join('\n'), /what the agents saw was the path's timeout firing at 2\.0 s on an engine that did not answer/);
  assert.match(e.evidence_against.join('\n'), /the path cuts requests at 2\.0 s/);
});

test('the same cut with requests still completing (a slow engine, not a stopped one) keeps both legs failing as a contributing fact: proxy', () => {
  const d = diagnose(frozenBehindTimeout(true));
  assert.equal(d.verdict, 'proxy', text(d));
  assert.match(d.episodes![0]!.facts.join('\n'), /contributing, not weighed .*direct canaries failed as often as proxied ones/);
});

test('the same cut in front of an engine whose queue is full while nothing completes (a slow prefill: every request cut before its answer) keeps both legs failing as a contributing fact: proxy', () => {
  const d = diagnose({ ...frozenBehindTimeout(false), scrapes: scrapes('engine', 30_000, 250, [], () => 6), flows: [flow('engine', 30_000, 250, [{ from: 1000, to: 28_000 }])] });
  assert.equal(d.verdict, 'proxy', text(d));
  assert.match(d.episodes![0]!.facts.join('\n'), /contributing, not weighed .*direct canaries failed as often as proxied ones/);
});

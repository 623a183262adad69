// Path timeouts: failures cut at one duration are named ("the path cuts requests at 2.0 s") with the settings
// that do it; through a proxy the cut makes the call `proxy` and the engine's slowness a contributing fact,
// straight to the engine it is the engine's own timeout and never a vote for the proxy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describePathTimeout, diagnose, findPathTimeout, type DiagnosisInput, type ErrorSpan } from '../../src/analysis/index.js';
import type { PathKind } from '../../src/types/index.js';
import { activity, canaries, client, error, flow, inside, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 30_000;

/** A proxy's 504 page `atMs` after a send at `sentMs` (the page arrives with its headers). */
function page504(sentMs: number, atMs: number, path: PathKind = 'proxy'): ErrorSpan {
  return error(sentMs, 'http_5xx', { to_ms: sentMs + atMs, http_status: 504, answered_by: 'page', detail: '504 Gateway Time-out nginx', path, headers_ms: atMs, last_byte_ms: atMs });
}

/** A stream whose headers came at once, closed `silenceMs` after its last byte. */
function closedAfter(sentMs: number, lastByteMs: number, silenceMs: number, cls = 'connection_reset'): ErrorSpan {
  return error(sentMs, cls, { to_ms: sentMs + lastByteMs + silenceMs, http_status: 200, headers_ms: 8, last_byte_ms: lastByteMs });
}

/** Nine failures every 3 s, each cut at 2.0 s give or take 20 ms. */
const JITTER = [0, 12, -20, 5, 20, -7, 3, -15, 9];
const nine504 = (path: PathKind = 'proxy'): ErrorSpan[] => JITTER.map((j, i) => page504(1000 + i * 3000, 2000 + j, path));

test('nine 504 pages at 2.0 s ± 20 ms are a cut at 2.0 s, named with the proxy settings that make it', () => {
  const found = findPathTimeout(nine504(), 9, 'proxy');
  assert.ok(found !== null);
  const t = found.timeout;
  assert.deepEqual(
    { seconds: t.seconds, spread_s: t.spread_s, count: t.count, of: t.of, kind: t.kind, by: t.by, statuses: t.statuses },
    { seconds: 2, spread_s: 0.02, count: 9, of: 9, kind: 'headers', by: 'path', statuses: { '504': 9 } },
  );
  const sentence = describePathTimeout(t);
  assert.match(sentence, /^the path cuts requests at 2\.0 s \(9 of 9 failures: 504 from the proxy at 2\.0 ± 0\.02 s after the send, before any response header\)/);
  assert.match(sentence, /nginx proxy_read_timeout \/ proxy_send_timeout; HAProxy timeout server/);
});

test('streams reset at a common silence after their last byte are a read cut, whatever their length before it', () => {
  // Headers at once, then tokens for 0 to 4 s, then 2.5 s of silence and the close.
  const errors = [0, 400, 1300, 2200, 3100, 4000].map((last, i) => closedAfter(i * 5000, last + 8, 2500 + (i % 2 === 0 ? 30 : -30)));
  const found = findPathTimeout(errors, errors.length, 'hop');
  assert.ok(found !== null);
  assert.equal(found.timeout.kind, 'read');
  assert.equal(found.timeout.count, 6);
  assert.ok(Math.abs(found.timeout.seconds - 2.5) <= 0.05, String(found.timeout.seconds));
  assert.match(describePathTimeout(found.timeout), /cuts requests at 2\.5 s \(6 of 6 failures: connection_reset at 2\.5 ± 0\.03 s after the last byte\)/);
});

test('504s before the headers and resets after them at the same silence are one cut (nginx proxy_read_timeout bounds both)', () => {
  const errors = [...nine504().slice(0, 5), ...[0, 1, 2, 3].map((i) => closedAfter(30_000 + i * 3000, 9, 2001 + i * 4))];
  const found = findPathTimeout(errors, errors.length, 'proxy');
  assert.ok(found !== null);
  assert.deepEqual(found.timeout.statuses, { '504': 5, connection_reset: 4 });
  assert.equal(found.timeout.count, 9);
  assert.match(describePathTimeout(found.timeout), /9 of 9 failures: 504 from the proxy 5, connection_reset 4 at 2\.0 ±/);
});

test('reused connections failing as the request goes out after the same idle gap are an idle timeout shorter than the think time', () => {
  const errors = [0, 1, 2, 3].map((i) => error(i * 4000, 'keepalive_race', { to_ms: i * 4000 + 3, nth: 2 + i, idle_ms: 3000 + i * 20, headers_ms: null, last_byte_ms: null }));
  const found = findPathTimeout(errors, 4, 'proxy');
  assert.ok(found !== null);
  assert.equal(found.timeout.kind, 'idle');
  assert.equal(found.timeout.seconds, 3.03);
  const sentence = describePathTimeout(found.timeout);
  assert.match(sentence, /^the path closes keep-alive connections idle for 3\.0 s or less \(4 of 4 failures: keepalive_race at 3\.0 ± 0\.03 s of idle time on a reused connection\)/);
  assert.match(sentence, /HAProxy timeout http-keep-alive \/ timeout client; an idle timeout shorter than the think time/);
});

test('failures spread over many durations are no cut', () => {
  const errors = [1200, 2000, 3100, 4400, 5900, 7500].map((at, i) => page504(i * 10_000, at));
  assert.equal(findPathTimeout(errors, errors.length, 'proxy'), null);
});

test('too few failures, too small a share, or instant error pages are no cut', () => {
  assert.equal(findPathTimeout(nine504().slice(0, 2), 2, 'proxy'), null, 'two failures');
  const spread = [1200, 3500, 5000].map((at, i) => page504(40_000 + i * 9000, at));
  assert.equal(findPathTimeout([...nine504().slice(0, 3), ...spread], 6, 'proxy'), null, '3 of 6 at 2.0 s: half is not most');
  const instant = [0, 1, 2, 3, 4].map((i) => error(i * 1000, 'connection_refused', { to_ms: i * 1000 + 1 }));
  assert.equal(findPathTimeout(instant, 5, 'proxy'), null, 'refusals at once are no timeout');
  const pages503 = [0, 1, 2, 3].map((i) => error(i * 1000, 'http_5xx', { to_ms: i * 1000 + 2000, http_status: 503, answered_by: 'page', headers_ms: 2000 }));
  assert.equal(findPathTimeout(pages503, 4, 'proxy'), null, '503: no server available, not a timeout');
});

/** A slow engine behind a proxy with a 2 s read timeout: both canary legs wait, its queue is up, work flows, TTFT rises; the agents' requests get 504s at 2.0 s. */
function slowBehindTimeout(path: PathKind, extra: Partial<DiagnosisInput> = {}): DiagnosisInput {
  const slow = [{ from: 1000, to: 27_000 }];
  const queued = (ms: number): 'hang' | 'ok' => (inside(ms, slow) ? 'hang' : 'ok');
  return {
    path,
    hangs: [],
    errors: nine504(path),
    canaries: [...canaries('direct', RUN_MS, 1000, queued), ...canaries('proxied', RUN_MS, 1000, queued)].map((c) => (c.status === 'hang' ? { ...c, hang_phase: 'first_token' as const } : c)),
    scrapes: scrapes('engine', RUN_MS, 250, [], (ms) => (inside(ms, slow) ? 6 : 0)),
    flows: [flow('engine', RUN_MS, 250, [])],
    gauges: [],
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, [], (ms) => (inside(ms, slow) ? 1800 : 200))),
    ...extra,
  };
}

test('a slow engine behind a proxy that cuts at 2.0 s is proxy, the cut named and the slowness kept as a contributing fact', () => {
  const d = diagnose(slowBehindTimeout('proxy'));
  assert.equal(d.verdict, 'proxy', d.evidence.join('\n'));
  assert.equal(d.path_timeout?.seconds, 2);
  assert.equal(d.path_timeout?.by, 'path');
  const e = d.episodes![0]!;
  assert.equal(e.path_timeout?.count, 9);
  assert.match(e.evidence_for[0]!, /^the path cuts requests at 2\.0 s \(9 of 9 failures: 504 from the proxy at 2\.0 ± 0\.02 s/);
  const facts = e.facts.join('\n');
  assert.match(facts, /contributing, not weighed \(the path's timeout made the failures\): requests waited in the engine's queue/);
  assert.match(facts, /contributing, not weighed \(the path's timeout made the failures\): direct canaries failed as often as proxied ones/);
  assert.equal(e.scores.engine_overloaded ?? 0, 0, JSON.stringify(e.scores));
});

test('an engine frozen behind the same 2 s timeout is still engine: the cut is named, but a stopped engine is its own fault', () => {
  const frozen = [{ from: 500, to: 28_500 }];
  const d = diagnose(slowBehindTimeout('proxy', { scrapes: scrapes('engine', RUN_MS, 250, frozen), flows: [flow('engine', RUN_MS, 250, frozen)], activity: activity(steadyRequests(RUN_MS, frozen)) }));
  assert.equal(d.verdict, 'engine', d.evidence.join('\n'));
  assert.equal(d.path_timeout?.seconds, 2);
  assert.match(d.episodes![0]!.evidence_against.join('\n'), /the path cuts requests at 2\.0 s/);
});

test('on a direct path a cut at one duration is the engine’s own timeout: stated, never a vote for the proxy', () => {
  const d = diagnose(slowBehindTimeout('direct', { canaries: [] }));
  const e = d.episodes![0]!;
  assert.equal(e.scores.proxy, undefined);
  assert.notEqual(e.verdict, 'proxy');
  assert.equal(d.path_timeout?.by, 'engine');
  assert.match(e.facts.join('\n'), /the engine itself cuts requests at 2\.0 s \(9 of 9 failures: 504 from the engine at 2\.0 ± 0\.02 s[^)]*\): the engine's own request timeout/);
  assert.doesNotMatch(e.facts.join('\n'), /contributing/);
});

test('one failure every few seconds, an episode each, is still a cut of the run, and each episode votes on it', () => {
  const errors = [0, 1, 2, 3].map((i) => page504(i * 7000, 2000 + i * 5));
  const d = diagnose({ path: 'proxy', hangs: [], errors, canaries: [], gauges: [], client: client(RUN_MS) });
  assert.equal(d.episodes?.length, 4);
  assert.equal(d.path_timeout?.count, 4);
  for (const e of d.episodes) assert.equal(e.path_timeout?.of, 4);
  assert.equal(d.verdict, 'proxy', d.evidence.join('\n'));
});

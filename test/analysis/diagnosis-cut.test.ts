// Streams cut while their answers flowed (issue 33's fault matrix: the engine killed and restarted behind
// HAProxy read `proxy` in 2 of 3 runs): HAProxy resets the client's streams the moment the engine dies, a
// burst of errors 0.1 s long. Read backwards, its 1 s window held only the healthy time before the kill; read
// forwards, it holds what the cut left behind — an engine gone, or one still answering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ErrorSpan } from '../../src/analysis/index.js';
import type { Diagnosis } from '../../src/types/index.js';
import type { Episode } from '../../src/analysis/diagnosis/episodes.js';
import { spanOf } from '../../src/analysis/diagnosis/judge.js';
import { activity, canaries, client, error, flow, hang, inside, scrapes, steadyRequests, type Span } from './diagnosis-fixtures.js';

const RUN_MS = 12_000;
const CUT_AT = 5000;
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** 4 streams (HTTP 200) reset at CUT_AT, each `silenceMs` after its last byte. */
function cuts(silenceMs: number): ErrorSpan[] {
  return Array.from({ length: 4 }, (_, i) => {
    const to = CUT_AT + i * 25;
    const from = to - silenceMs - 60;
    return { ...error(from, 'connection_reset', { http_status: 200, last_byte_ms: to - silenceMs - from }), to_ms: to };
  });
}

/** The cuts behind a proxy, with the engine down (scrapes failing, direct canaries refused, nothing flowing) over `down`. */
function run(errors: ErrorSpan[], down: readonly Span[]): DiagnosisInput {
  return {
    path: 'proxy',
    hangs: [],
    errors,
    canaries: [...canaries('direct', RUN_MS, 250, (ms) => (inside(ms, down) ? 'refused' : 'ok')), ...canaries('proxied', RUN_MS, 250, (ms) => (inside(ms, down) ? 'hang' : 'ok'))],
    scrapes: scrapes('engine', RUN_MS, 200, down),
    flows: [flow('engine', RUN_MS, 200, down)],
    gauges: [],
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, down)),
  };
}

test('streams cut while flowing, the engine gone for the second after: engine, read from what followed the cut', () => {
  const d = diagnose(run(cuts(20), [{ from: CUT_AT, to: CUT_AT + 1000 }]));
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /engine's \/metrics did not answer/);
});

test('streams cut while flowing, the engine answering before and after: proxy', () => {
  const d = diagnose(run(cuts(20), []));
  assert.equal(d.verdict, 'proxy', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /engine answered all \d+ scrapes of \/metrics over the episode/);
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /4 connections were reset by the proxy \(the side roundload talks to\)/);
});

test('CUT_AT_ONCE_MS: cut within 500 ms of the last byte widens forwards; later (a path timeout: the trouble came before), or any failure otherwise, backwards', () => {
  const episode = (errors: ErrorSpan[]): Episode => ({ kind: 'errors', from_ms: Math.min(...errors.map((e) => e.from_ms)), to_ms: Math.max(...errors.map((e) => e.to_ms)), hangs: [], errors });
  const forwards = (errors: ErrorSpan[]): boolean => {
    const ep = episode(errors);
    const w = spanOf(ep);
    assert.equal(w.to_ms - w.from_ms, 1000, 'a short span is read over 1 s');
    return w.from_ms === ep.from_ms;
  };
  assert.equal(forwards(cuts(20)), true);
  assert.equal(forwards(cuts(500)), true);
  assert.equal(forwards(cuts(501)), false);
  // One failure that is not such a cut (an error page) and the episode is read backwards.
  assert.equal(forwards([...cuts(20), error(CUT_AT, 'http_5xx', { http_status: 502, answered_by: 'page' })]), false);
  // A reset before any answer (no last byte) is timed from its send: 80 ms after it, forwards (HAProxy's
  // keepalive_race as the engine died); 600 ms, backwards. A record that does not say (undefined): backwards.
  const noByte = (e2e: number): ErrorSpan[] => cuts(20).map((e) => ({ ...e, from_ms: e.to_ms - e2e, last_byte_ms: null }));
  assert.equal(forwards(noByte(80)), true);
  assert.equal(forwards(noByte(600)), false);
  assert.equal(forwards(cuts(20).map(({ last_byte_ms: _, ...e }) => e)), false);
});

test('an engine down for a moment (refused twice) while work still flowed most of the episode is engine, not engine_overloaded: an overloaded engine still accepts connections', () => {
  const down = [{ from: CUT_AT, to: CUT_AT + 400 }];
  const refusedScrapes = (stepMs: number) => scrapes('engine', RUN_MS, stepMs, down).map((s) => (s.ok ? s : { ...s, duration_ms: 1, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:30000' }));
  const input: DiagnosisInput = {
    ...run(cuts(20), []),
    errors: [],
    hangs: Array.from({ length: 4 }, (_, i) => hang(CUT_AT + i * 20, CUT_AT + 900 + i * 20)),
    canaries: [...canaries('direct', RUN_MS, 250, (ms) => (inside(ms, down) ? 'refused' : 'ok')), ...canaries('proxied', RUN_MS, 250, (ms) => (inside(ms, down) ? 'hang' : 'ok'))],
    scrapes: refusedScrapes(200),
  };
  const d = diagnose(input);
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /was refused 2 times in the episode .*nothing listened at its address for part of the episode/);
  // Timeouts instead of refusals (a stall, not a restart: scrapes and direct canaries alike wait) make no such vote.
  const waited = [...canaries('direct', RUN_MS, 250, (ms) => (inside(ms, down) ? 'hang' : 'ok')), ...canaries('proxied', RUN_MS, 250, (ms) => (inside(ms, down) ? 'hang' : 'ok'))];
  const stalled = diagnose({ ...input, canaries: waited, scrapes: scrapes('engine', RUN_MS, 200, down) });
  assert.doesNotMatch(stalled.evidence.join('\n'), /nothing listened at its address for part/);
});

test("the proxy's resets while the engine was seen going down (its /metrics refused) are the engine's, passed on: a restart too quick to stop the work is engine, not proxy", () => {
  // The full suite's load made this of HAProxy in front of an engine killed and started again: 4 streams reset,
  // the engine's port refusing two scrapes, one canary failing on each leg, work flowing around the 0.4 s gap.
  const down = [{ from: CUT_AT, to: CUT_AT + 400 }];
  const refused = scrapes('engine', RUN_MS, 200, down).map((s) => (s.ok ? s : { ...s, duration_ms: 1, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:30000' }));
  const input: DiagnosisInput = {
    ...run(cuts(20), []),
    canaries: [...canaries('direct', RUN_MS, 250, (ms) => (ms === CUT_AT + 250 ? 'refused' : 'ok')), ...canaries('proxied', RUN_MS, 250, (ms) => (ms === CUT_AT + 250 ? 'hang' : 'ok'))],
    scrapes: refused,
  };
  const d = diagnose(input);
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /4 connections were reset by the proxy while the engine was seen failing \(engine's \/metrics was refused 2 times/);
  assert.doesNotMatch(text(d), /reset by the proxy \(the side roundload talks to\)/);
});

test("a restart so quick that one scrape and one direct canary met it (each refused once) is engine: refusals at the engine's addresses count together, whichever probe met them", () => {
  // What a quiet machine made of the engine killed and started again behind HAProxy: the engine back within
  // 0.2 s, its /metrics refused once, one direct canary refused, work flowing on both sides of the gap.
  const down = [{ from: CUT_AT, to: CUT_AT + 200 }];
  const refusedScrapes = scrapes('engine', RUN_MS, 200, down).map((s) => (s.ok ? s : { ...s, duration_ms: 1, error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:30000' }));
  const input: DiagnosisInput = {
    ...run(cuts(20), []),
    errors: [],
    hangs: Array.from({ length: 4 }, (_, i) => hang(CUT_AT + i * 20, CUT_AT + 900 + i * 20)),
    canaries: [...canaries('direct', RUN_MS, 250, (ms) => (inside(ms, down) ? 'refused' : 'ok')), ...canaries('proxied', RUN_MS, 250, (ms) => (inside(ms, down) ? 'hang' : 'ok'))],
    scrapes: refusedScrapes,
  };
  assert.equal(refusedScrapes.filter((s) => !s.ok).length, 1, 'one scrape met the gap');
  const d = diagnose(input);
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /the engine's addresses refused 2 connections in the episode \(engine's \/metrics once each, 1 direct canary\)/);
  // The scrape alone (the canary answered) is one refusal: no such vote.
  const scrapeOnly = diagnose({ ...input, canaries: [...canaries('direct', RUN_MS, 250, () => 'ok'), ...canaries('proxied', RUN_MS, 250, (ms) => (inside(ms, down) ? 'hang' : 'ok'))] });
  assert.doesNotMatch(scrapeOnly.evidence.join('\n'), /the engine's addresses refused/);
});

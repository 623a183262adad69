// The decode of a PD deployment stopped while its prefill still takes requests (issue 33's fault matrix:
// every `decode_stall` scenario was called engine_overloaded at 0.70, the prefill's moving counters read as
// flow and the decode's full queue as overload). The prefill's counters are not flow; a queue nobody works
// off is not overload; requests held running while nothing flows are the deployment holding them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ScrapePoint } from '../../src/analysis/index.js';
import type { Diagnosis } from '../../src/types/index.js';
import { activity, canaries, client, flow, hang, inside, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 20_000;
const STOP = { from: 5000, to: 15_000 };
const text = (d: Diagnosis): string => d.evidence.join('\n');
const sided = (points: ScrapePoint[], side: 'prefill' | 'decode'): ScrapePoint[] => points.map((p) => ({ ...p, side }));
const hangs = [5200, 6400, 7600, 8800, 10_000, 11_200].map((ms) => hang(ms, ms + 1000, 'first_token'));
const same = (ms: number): 'hang' | 'ok' => (inside(ms, [STOP]) ? 'hang' : 'ok');

/** PD behind a proxy: the prefill's counter moves throughout; the decode's stops through STOP, its queue
 * filling (`decodeQueue`) and its running gauge at `running`. */
function pd(decodeStops: boolean, running: number, withSides = true): DiagnosisInput {
  const decodeStill = decodeStops ? [STOP] : [];
  const prefill = scrapes('prefill', RUN_MS, 250, [], () => 0);
  const decode = scrapes('decode', RUN_MS, 250, [], (ms) => (decodeStops && inside(ms, [STOP]) ? 4 : 0)).map((p) => ({ ...p, running }));
  return {
    path: 'proxy',
    hangs,
    canaries: [...canaries('direct', RUN_MS, 250, same), ...canaries('proxied', RUN_MS, 250, same)],
    scrapes: [...(withSides ? sided(prefill, 'prefill') : prefill), ...(withSides ? sided(decode, 'decode') : decode)],
    flows: [flow('prefill', RUN_MS, 250, []), flow('decode', RUN_MS, 250, decodeStill)],
    gauges: [],
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, decodeStill)),
  };
}

test('the decode stopped while the prefill still moves is engine, not engine_overloaded: the prefill kept taking requests the decode did not answer', () => {
  const d = diagnose(pd(true, 2));
  assert.equal(d.verdict, 'engine', text(d));
  assert.ok((d.confidence ?? 0) >= 0.6, `confidence ${d.confidence}`);
  const e = d.episodes![0]!;
  assert.ok((e.scores.engine_overloaded ?? 0) < (e.scores.engine ?? 0) - 2, JSON.stringify(e.scores));
  assert.match(
    e.evidence_for.join('\n'),
    /nothing flowed through most of the episode .*prefill generation_tokens_total moved in \d+ of them: the prefill kept taking requests the decode did not answer/,
  );
  assert.match(e.evidence_for.join('\n'), /decode \(≥ 1 in \d+ of \d+ scrapes, up to 2\) reported requests running through the episode while nothing flowed/);
  assert.doesNotMatch(text(d), /work kept flowing/);
});

test('without knowing which server is which, the prefill counter still counts as flow (a single server, a router): the side is what tells', () => {
  const d = diagnose(pd(true, 2, false));
  assert.match(text(d), /work kept flowing through the episode/);
});

test('nothing running on the decode while nothing flows adds no held-running vote; the stop is still engine', () => {
  const d = diagnose(pd(true, 0));
  assert.equal(d.verdict, 'engine', text(d));
  assert.doesNotMatch(text(d), /reported requests running/);
  assert.match(text(d), /requests waited in the engine's queue \(≥ 1 in \d+ of \d+ scrapes, up to 4\) while nothing flowed: an engine that finished none of them, stopped or too slow/);
});

test('a decode that keeps flowing is not called stopped, whatever the prefill does', () => {
  const d = diagnose(pd(false, 2));
  assert.notEqual(d.verdict, 'engine', text(d));
  assert.match(text(d), /work kept flowing through the episode .*decode generation_tokens_total/);
});

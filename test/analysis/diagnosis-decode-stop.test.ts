// A PD decode that stops for a stretch and then goes on (a loop paused 2-3 s, a stuck scheduler that recovers)
// while its prefill keeps taking requests: the queue builds and the first tokens come late, as under overload,
// and work flows around the stop. Held-out probes of 8 agents against the embedded PD engine read it
// engine_overloaded at 0.84-0.94. A decode at its capacity keeps making tokens; one holding requests that makes
// none for longer than it ever did outside the trouble stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput, type ScrapePoint } from '../../src/analysis/index.js';
import type { Diagnosis } from '../../src/types/index.js';
import type { FlowTrack } from '../../src/analysis/diagnosis/inputs.js';
import { activity, client, flow, hang, inside, scrapes, steadyRequests, type Span } from './diagnosis-fixtures.js';

const RUN_MS = 12_000;
const STEP_MS = 100;
const STOP: Span = { from: 5000, to: 7000 };
const text = (d: Diagnosis): string => d.evidence.join('\n');
const hangs = [4200, 4800, 5400, 6000, 6600, 7200].map((ms) => hang(ms, ms + 1000, 'first_token', 'direct', 1000));

/** A counter that moved only at `every` ms outside `still` (one that counts tokens as answers finish). */
function lazyFlow(target: string, every: number, still: readonly Span[]): FlowTrack {
  const moved: number[] = [];
  for (let ms = every; ms <= RUN_MS; ms += every) if (!inside(ms, still)) moved.push(ms - STEP_MS, ms);
  return { target, counter: 'generation_tokens_total', moved };
}

/** PD straight to the router: the prefill works throughout; the decode runs 1 request at every scrape, its
 * queue at 4 through STOP, its counter still through `decodeStill` (or as `decodeFlow` says). */
function pd(decodeStill: readonly Span[], decodeFlow: FlowTrack = flow('decode', RUN_MS, STEP_MS, decodeStill)): DiagnosisInput {
  const side = (points: ScrapePoint[], s: 'prefill' | 'decode'): ScrapePoint[] => points.map((p) => ({ ...p, side: s }));
  return {
    path: 'direct',
    hangs,
    canaries: [],
    scrapes: [
      ...side(scrapes('prefill', RUN_MS, STEP_MS, []), 'prefill'),
      ...side(
        scrapes('decode', RUN_MS, STEP_MS, [], (ms) => (inside(ms, [STOP]) ? 4 : 0)),
        'decode',
      ),
    ],
    flows: [flow('prefill', RUN_MS, STEP_MS, []), decodeFlow],
    gauges: [],
    client: client(RUN_MS),
    // Completions go on outside the stop: those sent before it and after it.
    activity: activity(steadyRequests(RUN_MS, [STOP], (ms) => (ms >= 4000 && ms < 7000 ? 900 : 150))),
  };
}

test('a decode that stops 2 s with requests running and waiting, work flowing around it, is engine: the late first tokens and the work around it are not weighed as overload', () => {
  const d = diagnose(pd([STOP]));
  assert.equal(d.verdict, 'engine', text(d));
  const e = d.episodes![0]!;
  assert.match(
    e.evidence_for.join('\n'),
    /the decode stopped: decode made no token for 2\.1 s \(4\.9 s to 7\.0 s\) while it had up to \d requests running or waiting: none of its answer counters moved; outside the trouble they moved between every two scrapes while it had some/,
  );
  assert.match(
    (e.facts ?? []).join('\n'),
    /6 of 6 hung requests had their response headers and waited for a first token while \d+ others sent meanwhile completed: not weighed as overload, decode having stopped/,
  );
  assert.ok((e.scores.engine ?? 0) - (e.scores.engine_overloaded ?? 0) >= 3, JSON.stringify(e.scores));
});

test('switched off: the same queue and late first tokens with the decode making tokens throughout is engine_overloaded, no stop named', () => {
  const d = diagnose(pd([]));
  assert.equal(d.verdict, 'engine_overloaded', text(d));
  assert.doesNotMatch(text(d), /the decode stopped/);
});

test('a counter that moves only every 2.5 s outside the trouble (answers counted as they finish) is not read as a stop when it keeps that pace through the episode', () => {
  const d = diagnose(pd([STOP], lazyFlow('decode', 2500, [])));
  assert.doesNotMatch(text(d), /the decode stopped/);
});

test('a decode holding nothing while its counter stands is idle, not stopped', () => {
  const input = pd([STOP]);
  const idle = { ...input, scrapes: input.scrapes!.map((p) => (p.target === 'decode' && inside(p.run_ms, [STOP]) ? { ...p, running: 0, queue: 0 } : p)) };
  assert.doesNotMatch(text(diagnose(idle)), /the decode stopped/);
});

// The diagnosis's fact from the engine's own trace of a hung request: where it ends, in the episode the hang
// belongs to and in the evidence; nothing for a hang whose trace the engine did not record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngineTraceFacts } from '../../src/analysis/diagnosis/index.js';
import type { Diagnosis } from '../../src/types/index.js';

const EPISODE = {
  kind: 'hangs' as const,
  start_ms: 10_000,
  end_ms: 14_000,
  requests: 1,
  verdict: 'engine' as const,
  confidence: 0.8,
  evidence_for: ['a queue gauge pinned'],
  evidence_against: [],
  facts: ['1 request hung'],
  scores: {},
  canaries: null,
};
const DIAGNOSIS: Diagnosis = { verdict: 'engine', confidence: 0.8, evidence: ['1 request hung'], episodes: [EPISODE] };

test("a hung request's engine trace ending in a stage is a fact of its episode and of the evidence", () => {
  const d = withEngineTraceFacts(
    DIAGNOSIS,
    [
      { trace_id: 'a'.repeat(32), request_id: 'rl-x-a0-c1-r3-7', detected_ms: 13_900 },
      { trace_id: 'b'.repeat(32), request_id: null, detected_ms: 13_950 },
    ],
    [
      {
        trace_id: 'a'.repeat(32),
        server: 'engine-decode',
        stage: 'decode_waiting',
        stage_from_ms: 2_100,
        at_ms: 12_345,
        open: true,
        error: 'still open when the engine stopped, in decode_waiting',
      },
    ],
  );
  const fact = `the hung request "rl-x-a0-c1-r3-7" (trace ${'a'.repeat(32)}): the engine's trace ends in decode_waiting (the decode server's prealloc and transfer queues: waiting for its KV) (engine-decode), in it from 2.1 s until the engine stopped at 12.3 s`;
  assert.deepEqual(d.episodes?.[0]?.facts, ['1 request hung', fact]);
  assert.deepEqual(d.evidence, ['1 request hung', fact]);
  assert.equal(d.verdict, 'engine', 'a fact: no verdict moves');
  assert.deepEqual(d.episodes?.[0]?.scores, {});
});

test('a stage that ended (the client went away) says when and why', () => {
  const d = withEngineTraceFacts(
    DIAGNOSIS,
    [{ trace_id: 'a'.repeat(32), request_id: null, detected_ms: 11_000 }],
    [{ trace_id: 'a'.repeat(32), server: 'engine-decode', stage: 'decode_forward', stage_from_ms: 9_000, at_ms: 11_050, open: false, error: 'cancelled: the client went away' }],
  );
  assert.equal(
    d.evidence.at(-1),
    `the hung request (trace ${'a'.repeat(32)}): the engine's trace ends in decode_forward (decoding: the answer streaming) at 11.1 s (engine-decode, in it since 9.0 s: cancelled: the client went away)`,
  );
});

test('without an engine trace of the hung request the diagnosis is unchanged', () => {
  assert.equal(withEngineTraceFacts(DIAGNOSIS, [{ trace_id: 'c'.repeat(32), request_id: null, detected_ms: 12_000 }], []), DIAGNOSIS);
  const other = withEngineTraceFacts(
    DIAGNOSIS,
    [{ trace_id: 'c'.repeat(32), request_id: null, detected_ms: 12_000 }],
    [{ trace_id: 'd'.repeat(32), server: 'engine', stage: null, stage_from_ms: null, at_ms: 1, open: false, error: 'x' }],
  );
  assert.deepEqual(other, DIAGNOSIS);
});

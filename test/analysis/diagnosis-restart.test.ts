// An engine restarted between two scrapes (no scrape met it down, no canary was refused): the agents' requests
// in flight hang or are reset, the new process answers at once and its counters move, so "work kept flowing"
// and both canary legs failing read engine_overloaded (llama-restarted-haproxy, 1 run in 3 of the matrix, at
// 0.83). A Prometheus counter never goes back while its process lives: one that did says the process restarted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput } from '../../src/analysis/index.js';
import type { Diagnosis } from '../../src/types/index.js';
import { activity, canaries, client, flow, hang, inside, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 8000;
const TROUBLE = { from: 1500, to: 2500 };
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** Behind a proxy, 4 hangs at headers over TROUBLE; the engine answers every scrape and its counter moves
 * throughout; canaries on both legs fail in TROUBLE. `resets`: when its counter went back. */
function restarted(resets: number[]): DiagnosisInput {
  const failing = (ms: number): 'ok' | 'hang' => (inside(ms, [TROUBLE]) ? 'hang' : 'ok');
  return {
    path: 'proxy',
    hangs: [1600, 1800, 2000, 2200].map((ms) => hang(ms, ms + 800, 'headers')),
    canaries: [...canaries('direct', RUN_MS, 250, failing), ...canaries('proxied', RUN_MS, 250, failing)],
    scrapes: scrapes('engine', RUN_MS, 200, []),
    flows: [{ ...flow('engine', RUN_MS, 200, []), resets }],
    gauges: [],
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, [])),
  };
}

test('a flow counter that went back in the episode is the engine restarting: engine, not engine_overloaded', () => {
  const d = diagnose(restarted([1600, 1800]));
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(d.episodes![0]!.evidence_for.join('\n'), /engine's generation_tokens_total went back between the scrapes at 1\.6 s and 1\.8 s: its process restarted, counting from 0/);
});

test('switched off: the same run with no reset is not called engine from a restart', () => {
  const d = diagnose(restarted([]));
  assert.doesNotMatch(text(d), /its process restarted/);
  assert.notEqual(d.verdict, 'engine', text(d));
});

test('a reset outside the episode says nothing of it', () => {
  assert.doesNotMatch(diagnose(restarted([6000, 6200])).episodes![0]!.evidence_for.join('\n'), /restarted/);
});

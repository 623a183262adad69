import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { RequestRecord, PhaseEvent } from '../../src/types/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import { LoopDelay } from '../helpers/loop-delay.js';

const BASE = `
name: sweep
window_s: 0.5
agents: {count: 1, rounds: 6, think_time_ms: 0}
conversation: {tools: none, system_prompt_tokens: 50, first_user_tokens: 20, max_tokens: 40}
engine: {prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, decode_step_ms: 5, output_tokens_min: 10, output_tokens_max: 30}
`;

test('a sweep runs one phase per level in order; warm-up requests are flagged and left out of the phase figures', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(`${BASE}sweep: {agents: [2, 3], warmup_s: 0.3}\n`, 'sweep.yaml');
  const result = await executeRun({ workload, out });
  assert.equal(result.status, 'completed');
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  const phases = readJsonl<PhaseEvent & { kind: string }>(join(out, 'events.jsonl')).filter((e) => e.kind === 'phase');
  assert.deepEqual(
    phases.map((p) => [p.name, p.agents, p.warmup_ms]),
    [
      ['c2', 2, 300],
      ['c3', 3, 300],
    ],
  );
  assert.equal(records.length, (2 + 3) * 6, 'every agent of every level does its rounds');
  // c3 starts after every c2 request is done.
  const c2End = Math.max(...records.filter((r) => r.phase === 'c2').map((r) => r.run_ms + r.e2e_ms));
  assert.ok(phases[1]!.run_ms >= c2End - 1, `${phases[1]!.run_ms} ≥ ${c2End}`);
  for (const r of records) {
    const start = phases.find((p) => p.name === r.phase)!.run_ms;
    // Sent in the first 0.3 s of its phase ⇔ flagged (1 ms of slack for the rounding of the phase's run_ms).
    if (r.run_ms < start + 299) assert.equal(r.warmup, true, `${r.conversation} r${r.round} at ${r.run_ms}`);
    if (r.run_ms > start + 301) assert.equal(r.warmup, undefined, `${r.conversation} r${r.round} at ${r.run_ms}`);
  }
  const warm = records.filter((r) => r.warmup === true);
  assert.ok(warm.length >= 5, 'at least every agent’s first request is warm-up');
  // Fresh conversations in every phase, ids unique in the run.
  assert.deepEqual([...new Set(records.filter((r) => r.phase === 'c2').map((r) => r.conversation))].sort(), ['a0-c1', 'a1-c1']);
  assert.deepEqual([...new Set(records.filter((r) => r.phase === 'c3').map((r) => r.conversation))].sort(), ['a0-c2', 'a1-c2', 'a2-c1']);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.deepEqual(
    summary.phases.map((p) => p.phase),
    ['c2', 'c3'],
  );
  for (const p of summary.phases) {
    const mine = records.filter((r) => r.phase === p.phase);
    assert.equal(p.requests, mine.filter((r) => r.warmup !== true).length, p.phase);
    assert.equal(p.warmup?.requests, mine.filter((r) => r.warmup === true).length, p.phase);
    assert.equal(p.ttft.count, mine.filter((r) => r.warmup !== true && r.status === 'ok').length, `${p.phase}: warm-up TTFTs are not in the histogram`);
  }
  assert.equal(summary.totals.requests, 30, 'the totals keep the warm-up requests');
  for (const w of summary.windows.filter((x) => x.steady)) {
    const last = Math.max(...records.filter((r) => r.phase === w.phase && r.warmup === true).map((r) => r.run_ms));
    assert.ok(w.start_s * 1000 >= last, `steady window ${w.phase}@${w.start_s} starts after the last warm-up send (${last})`);
  }
});

test('sweep.phase_duration: agents start new conversations until the phase time is up, then in-flight requests finish', async (t) => {
  const out = join(tempDir(t), 'run');
  // Conversations of 2 short rounds (about 0.15 s): a machine ten times slower still finishes one well within
  // the phase, so the agents go on.
  const workload = parseWorkload(`${BASE}sweep: {agents: [2], warmup_s: 0, phase_duration: 2s}\n`, 'sweep.yaml', {
    set: ['agents.rounds=2', 'engine.output_tokens_min=6', 'engine.output_tokens_max=12'],
  });
  const loop = new LoopDelay();
  const result = await executeRun({ workload, out });
  loop.stop();
  assert.equal(result.status, 'completed');
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  const start = readJsonl<PhaseEvent & { kind: string }>(join(out, 'events.jsonl')).find((e) => e.kind === 'phase')!.run_ms;
  assert.ok(
    records.every((r) => r.status === 'ok'),
    'the requests in flight at the end finish, they are not aborted',
  );
  // The phase ends when its timer fires: late by as much as this process's loop ran late (measured).
  const margin = Math.max(50, loop.marginMs());
  assert.ok(
    records.every((r) => r.run_ms <= start + 2000 + margin),
    `nothing is sent after the phase ends (margin ${margin.toFixed(0)} ms)`,
  );
  assert.ok(new Set(records.map((r) => r.conversation)).size > 2, 'agents went on with fresh conversations (2 rounds each)');
  // The agents kept sending until the end: the last send came at most one request's time (the longest, plus
  // the loop margin) before the phase ended.
  const longestMs = Math.max(...records.map((r) => r.e2e_ms));
  assert.ok(Math.max(...records.map((r) => r.run_ms)) > start + 2000 - longestMs - margin, `the phase lasted its time (longest request ${longestMs.toFixed(0)} ms)`);
});

test('`roundload validate` locates a repeated sweep level and a bad phase_duration', async (t) => {
  const file = join(tempDir(t), 'bad.yaml');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, 'sweep:\n  agents: [64, 96, 64]\n  phase_duration: 10 minutes\n');
  const res = await runCli(['validate', file]);
  assert.equal(res.code, 2);
  assert.match(res.stderr, /bad\.yaml:2:\d+ +sweep\.agents\.2 +level 64 appears twice/);
  assert.match(res.stderr, /bad\.yaml:3:\d+ +sweep\.phase_duration +invalid duration/);
});

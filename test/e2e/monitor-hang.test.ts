// The monitor around hangs, in whole runs on the embedded PD deployment: burst sampling at 100 ms after a hang,
// hang records carrying the latest gauges, probes at start, hang and end (one that never exits killed at its
// timeout), and the gauge faults judged right: pin → pinned, rotate → rotating.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { rebuildSummary } from '../../src/results/index.js';
import type { BurstEvent, HangEvent, ProbeEvent, RunEvent, ScrapeEvent } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { LoopDelay } from '../helpers/loop-delay.js';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

test('a hang starts burst sampling at 100 ms, its record carries the gauges, and probes run at start, hang and end', async (t) => {
  const out = join(tempDir(t), 'run');
  // A slow prefill (about 2.4 s for the 1200-token system prompt) against a 400 ms first-token deadline: every round
  // hangs; six rounds (about 2.5 s) keep the run going through a 2 s burst (three targets scraped at 100 ms:
  // about 20 scrapes each, so a loaded machine's slow scrapes still leave plenty).
  const loop = new LoopDelay();
  t.after(() => loop.stop());
  const workload = parseWorkload(
    `
agents: {count: 1, rounds: 6, think_time_ms: 0}
watchdog: {first_token_ms: 400}
engine: {prefill_ms_per_1k_tokens: 2000}
monitor:
  interval_ms: 1000
  burst: {interval_ms: 100, duration_s: 2}
  probes:
    - {name: say, command: 'echo "$ROUNDLOAD_PROBE_ON agent=$ROUNDLOAD_HANG_AGENT"', on: [start, hang, end], timeout_s: 5}
    - {name: forever, command: 'sleep 100', on: [end], timeout_s: 0.5}
`,
    'hang.yaml',
  );
  const result = await executeRun({ workload, out });
  assert.equal(result.summary.totals.hangs, 6);
  const scrapes = readJsonl<ScrapeEvent>(join(out, 'gauges.jsonl'));
  const events = readJsonl<RunEvent>(join(out, 'events.jsonl'));
  const hangs = events.filter((e): e is HangEvent => e.kind === 'hang');
  const bursts = events.filter((e): e is BurstEvent => e.kind === 'burst');
  assert.equal(bursts[0]?.state, 'start');
  assert.equal(bursts[0]?.reason, 'hang');
  assert.deepEqual(bursts[0]?.trigger, { agent: 0, conversation: 'a0-c1', round: 1 });
  // Each server is scraped on its own schedule: the prefill's scrapes alone.
  const burstTimes = scrapes.filter((s) => s.burst && s.target === 'prefill').map((s) => s.run_ms);
  const gaps = burstTimes.slice(1).map((x, i) => x - burstTimes[i]!);
  t.diagnostic(`hangs at ${hangs.map((h) => h.run_ms).join(', ')} ms; burst scrapes at ${burstTimes.join(' ')}`);
  assert.ok(burstTimes.length >= 5, `${burstTimes.length} burst scrapes`);
  // Late only by how late this process's loop ran (the engine and the monitor share it).
  const margin = Math.max(50, loop.marginMs());
  assert.ok(burstTimes[0]! - hangs[0]!.run_ms < 100 + margin, `the burst starts right at the hang (margin ${margin.toFixed(0)} ms)`);
  assert.ok(median(gaps) >= 80 && median(gaps) <= 100 + margin, `burst gaps ${gaps.join(' ')} (margin ${margin.toFixed(0)} ms)`);
  // The hang record has the latest scrape of each server of the deployment: the last hang's, well into the
  // burst (on a loaded machine the first hang can come before the first scrape of a server has answered).
  const lastHang = hangs.at(-1)!;
  assert.deepEqual(lastHang.gauges?.map((g) => g.target).sort(), ['decode', 'prefill', 'router']);
  const snap = lastHang.gauges?.find((g) => g.target === 'prefill');
  assert.ok(snap !== undefined && snap.run_ms !== null && snap.age_ms !== null && snap.age_ms <= 1000 + margin, JSON.stringify(snap));
  assert.ok(snap.samples.some((s) => s.name === 'sglang:num_queue_reqs'));
  // Probes: start, one hang (the second hang falls within probe_min_interval_s), end; the endless one killed.
  const probes = events.filter((e): e is ProbeEvent => e.kind === 'probe');
  assert.deepEqual(probes.map((p) => `${p.name}:${p.on}`).sort(), ['forever:end', 'say:end', 'say:hang', 'say:start']);
  assert.equal(probes.find((p) => p.on === 'hang')?.stdout, 'hang agent=0\n');
  assert.equal(probes.find((p) => p.name === 'say' && p.on === 'start')?.exit_code, 0);
  const forever = probes.find((p) => p.name === 'forever')!;
  assert.equal(forever.timed_out, true);
  assert.equal(forever.exit_code, null);
  assert.ok(forever.duration_ms >= 450 && forever.duration_ms < 2500 + margin, `killed after ${forever.duration_ms} ms`);
});

test('the pin fault (inflight gauge stuck at 1, nothing flowing) is called pinned', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `
agents: {count: 2, rounds: 2, think_time_ms: 0}
watchdog: {first_token_ms: 1200}
engine: {gauge_fault: {kind: pin}}
monitor: {interval_ms: 100, pin_after_s: 1, burst: {interval_ms: 100}}
`,
    'pin.yaml',
  );
  const result = await executeRun({ workload, out });
  assert.equal(result.summary.totals.hangs, 4);
  // In PD the gauge fault acts on the prefill server.
  const v = result.summary.gauges.find((g) => g.target === 'prefill' && g.name === 'sglang:num_prefill_inflight_queue_reqs')!;
  t.diagnostic(`${v.verdict}: ${v.evidence.join(' | ')}`);
  assert.equal(v.verdict, 'pinned');
  assert.equal(v.flow?.completions, 0);
  // The flow counter judged is one that moved, if any did: prompt_tokens_total moves once, when the first hung
  // requests are aborted (the engine counts a request's prompt when it ends, aborted or not) — never over the pin.
  assert.ok((v.flow?.counter_moved_intervals ?? 0) <= 1, JSON.stringify(v.flow));
  assert.match(v.evidence[0]!, /with nothing flowing: \w+ did not move, no client request completed and no token streamed/);
  assert.ok(v.longest_nonzero_s >= 2);
  // `roundload report` rebuilds the same verdicts from gauges.jsonl (with the run's pin_after_s).
  const rebuilt = await rebuildSummary(out);
  assert.deepEqual(
    rebuilt.summary.gauges.map((g) => [g.name, g.verdict]),
    result.summary.gauges.map((g) => [g.name, g.verdict]),
  );
});

test('the rotate fault (1 with a dip to 0 every period while requests complete) is called rotating', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `
agents: {count: 2, rounds: 12, think_time_ms: 50}
conversation: {system_prompt_tokens: 300, max_tokens: 48}
engine: {decode_step_ms: 4, gauge_fault: {kind: rotate, period_s: 0.8, dip_ms: 250}}
monitor: {interval_ms: 100, pin_after_s: 1}
`,
    'rotate.yaml',
  );
  const result = await executeRun({ workload, out });
  assert.equal(result.summary.totals.hangs, 0);
  const v = result.summary.gauges.find((g) => g.target === 'prefill' && g.name === 'sglang:num_prefill_inflight_queue_reqs')!;
  t.diagnostic(`${v.verdict} over ${v.window_s} s: ${v.evidence.join(' | ')}`);
  assert.equal(v.verdict, 'rotating');
  assert.ok(v.dips >= 2, `${v.dips} dips`);
  assert.ok((v.flow?.completions ?? 0) > 5);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { mergeRuns } from '../../src/results/index.js';
import { compareArms, loadRun } from '../../src/compare/index.js';
import type { ArrivalsEndEvent, ConversationStartEvent, PhaseEvent, RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

/** A small fast workload with these `agents`. */
function workload(agents: string, extra = ''): string {
  return `name: stages\nwindow_s: 0.5\nagents: ${agents}\nconversation: {tools: none, system_prompt_tokens: 50, first_user_tokens: 20, max_tokens: 32}\nengine: {prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, decode_step_ms: 2, output_tokens_min: 6, output_tokens_max: 12}\nmonitor: {enabled: false}\n${extra}`;
}

type Line = { kind: string };

function read(dir: string): { records: RequestRecord[]; phases: PhaseEvent[]; starts: ConversationStartEvent[]; ends: ArrivalsEndEvent[] } {
  const events = readJsonl<Line>(join(dir, 'events.jsonl'));
  return {
    records: readJsonl<RequestRecord>(join(dir, 'requests.jsonl')),
    phases: events.filter((e): e is PhaseEvent & Line => e.kind === 'phase'),
    starts: events.filter((e): e is ConversationStartEvent & Line => e.kind === 'conversation_start'),
    ends: events.filter((e): e is ArrivalsEndEvent & Line => e.kind === 'arrivals_end'),
  };
}

/** The phase announced last at or before `runMs` (a request is recorded in the stage it was sent in). */
function stageAt(phases: PhaseEvent[], runMs: number): string {
  return phases.filter((p) => p.run_ms <= runMs).at(-1)?.name ?? phases[0]!.name;
}

test('arrival stages: each stage is a phase with its own rate, and a request belongs to the stage it was sent in', async (t) => {
  const out = join(tempDir(t), 'run');
  const w = parseWorkload(workload('{rounds: 6, think_time_ms: 100, arrival: {distribution: constant}, stages: [{duration: 1.5s, rate_per_s: 2}, {duration: 1.5s, rate_per_s: 6}]}'), 'stages.yaml');
  const result = await executeRun({ workload: w, out });
  assert.equal(result.status, 'completed');
  const { records, phases, starts, ends } = read(out);
  assert.deepEqual(
    phases.map((p) => [p.name, p.load?.from, p.load?.to, p.load?.length_ms]),
    [
      ['s1-r2', 2, 2, 1500],
      ['s2-r6', 6, 6, 1500],
    ],
  );
  assert.ok(Math.abs(phases[1]!.run_ms - phases[0]!.run_ms - 1500) < 250, 'the second stage starts 1.5 s after the first');
  assert.deepEqual(ends[0]!.phases, { 's1-r2': { scheduled: 3, started: 3, delayed: 0, not_started: 0 }, 's2-r6': { scheduled: 9, started: 9, delayed: 0, not_started: 0 } });
  assert.equal(starts.filter((s) => s.phase === 's1-r2').length, 3);
  // Stage by send time: the record's phase is the stage running when it was sent (a few ms of slack at the
  // boundary: the announcement and the clock it is read on are a tick apart).
  for (const r of records) {
    const boundary = phases[1]!.run_ms;
    if (Math.abs(r.run_ms - boundary) > 20) assert.equal(r.phase, stageAt(phases, r.run_ms), `${r.conversation} r${r.round} at ${r.run_ms}`);
  }
  assert.ok(
    records.some((r) => r.phase === 's2-r6' && starts.find((s) => s.conversation === r.conversation)!.phase === 's1-r2'),
    'a conversation that began in stage 1 and went on sends its later rounds in stage 2',
  );
  const s = result.summary;
  assert.deepEqual(
    s.phases.map((p) => p.phase),
    ['s1-r2', 's2-r6'],
  );
  assert.deepEqual(
    s.phases.map((p) => p.arrivals?.arrivals_per_s),
    [2, 6],
  );
  assert.deepEqual(
    s.phases.map((p) => p.requests),
    ['s1-r2', 's2-r6'].map((name) => records.filter((r) => r.phase === name).length),
  );
  assert.ok(
    s.windows.some((x) => x.phase === 's2-r6' && x.steady === true),
    'an open-loop stage has steady windows (compare uses them)',
  );
});

test("stages of agent counts: the agents follow each stage's count, closed loop, each stage a phase", async (t) => {
  const out = join(tempDir(t), 'run');
  const w = parseWorkload(workload('{rounds: 4, think_time_ms: 20, stages: [{duration: 1s, count: 1}, {duration: 1s, count: 3}, {duration: 1s, count: 2}]}'), 'stages.yaml');
  const result = await executeRun({ workload: w, out });
  assert.equal(result.status, 'completed');
  const { records, phases, starts } = read(out);
  assert.deepEqual(starts, [], 'closed loop: no arrivals');
  assert.deepEqual(
    phases.map((p) => [p.name, p.agents]),
    [
      ['s1-c1', 1],
      ['s2-c3', 3],
      ['s3-c2', 2],
    ],
  );
  const agentsIn = (name: string): number[] => [...new Set(records.filter((r) => r.phase === name).map((r) => r.agent))].sort();
  assert.deepEqual(agentsIn('s1-c1'), [0]);
  assert.deepEqual(agentsIn('s2-c3'), [0, 1, 2]);
  // In stage 3 agent 2 sends nothing new (its request in flight at the boundary may still be recorded in stage 3 only if sent after it).
  const late = records.filter((r) => r.agent === 2 && r.run_ms > phases[2]!.run_ms + 150);
  assert.deepEqual(late, [], 'an agent above the count stops sending');
  assert.ok(
    records.every((r) => r.status === 'ok'),
    'stopping an agent lets its request in flight finish',
  );
  assert.ok(
    records.filter((r) => r.agent === 1).every((r) => r.run_ms >= phases[1]!.run_ms - 5),
    'agent 1 starts with stage 2',
  );
  assert.equal(new Set(records.map((r) => r.conversation)).size, new Set(records.map((r) => `${r.agent}/${r.conversation}`)).size);
  assert.deepEqual(
    result.summary.phases.map((p) => p.load?.kind),
    ['agents', 'agents', 'agents'],
  );
  assert.equal(result.summary.arrivals, undefined);
});

test('--shard i/N of an open-loop run: each shard takes rate/N on its own slots; merge adds the arrivals up', async (t) => {
  const dir = tempDir(t);
  // max_active far above the 12 arrivals: on a loaded machine slow conversations must not hold arrivals back
  // past the duration (not_started), which would make the shares depend on the load.
  const yaml = workload('{rounds: 2, think_time_ms: 0, arrival: {rate_per_s: 6, distribution: constant, max_active: 32}}', 'duration: 2s\n');
  const shards = await Promise.all([0, 1].map((index) => executeRun({ workload: parseWorkload(yaml, 'stages.yaml'), out: join(dir, `s${index}`), shard: { index, count: 2 } })));
  const parts = [0, 1].map((i) => read(join(dir, `s${i}`)));
  for (const [i, p] of parts.entries()) {
    assert.equal(p.starts.length, 6, `shard ${i}: half of 12`);
    assert.ok(
      p.starts.every((s) => s.agent % 2 === i),
      `shard ${i} runs slots ${i}, ${i + 2}…`,
    );
    assert.equal(shards[i]!.summary.arrivals!.started, 6);
  }
  // Under `constant` the shards interleave into the one sequence: shard 1's arrivals sit between shard 0's.
  const offset = (p: (typeof parts)[number]) => p.starts.map((s) => s.scheduled_ms - p.phases[0]!.run_ms);
  assert.ok(Math.abs(offset(parts[1]!)[0]! - offset(parts[0]!)[0]! - 1000 / 6) < 5);
  const ids = parts.flatMap((p) => p.starts.map((s) => s.conversation));
  assert.equal(new Set(ids).size, 12, 'conversation ids never collide between shards');
  const merged = await mergeRuns([join(dir, 's0'), join(dir, 's1')], { out: join(dir, 'merged') });
  const a = merged.summary.arrivals!;
  assert.deepEqual([a.scheduled, a.started, a.not_started], [12, 12, 0]);
  assert.equal(merged.summary.phases[0]!.arrivals!.arrivals_per_s, 6, 'the merged run arrived at the whole rate');
  assert.equal(a.start_lag.count, 12);
});

test('an open-loop run over worker threads: each thread takes its share of the rate, the phase is announced once', async (t) => {
  const out = join(tempDir(t), 'run');
  const result = await executeRun({
    workload: parseWorkload(workload('{rounds: 2, think_time_ms: 0, workers: 2, arrival: {rate_per_s: 6, distribution: constant, max_active: 32}}', 'duration: 2s\n'), 'stages.yaml'),
    out,
  });
  assert.equal(result.status, 'completed');
  const { starts, phases, ends, records } = read(out);
  assert.equal(phases.length, 1);
  assert.equal(starts.length, 12);
  assert.deepEqual(new Set(starts.map((s) => s.agent % 2)), new Set([0, 1]), 'both threads started conversations');
  assert.equal(ends.length, 2, 'one arrivals_end per thread');
  assert.equal(result.summary.arrivals!.scheduled, 12);
  assert.ok(
    records.every((r) => r.connection?.id.startsWith(`w${r.agent % 2}.`)),
    'each thread on its own sockets',
  );
});

test('compare works stage by stage on two open-loop runs', async (t) => {
  const dir = tempDir(t);
  const yaml = workload('{rounds: 2, think_time_ms: 0, arrival: {distribution: constant}, stages: [{duration: 1.5s, rate_per_s: 4}, {duration: 1.5s, rate_per_s: 8}]}');
  for (const arm of ['a', 'b']) await executeRun({ workload: parseWorkload(yaml, 'stages.yaml'), out: join(dir, arm) });
  const c = compareArms({ name: 'a', runs: [await loadRun(join(dir, 'a'))] }, { name: 'b', runs: [await loadRun(join(dir, 'b'))] });
  assert.deepEqual(
    c.phases.map((p) => p.phase),
    ['s1-r4', 's2-r8'],
  );
  assert.ok(
    c.phases.every((p) => p.windowsA > 0 && p.windowsB > 0),
    'each stage has steady windows to compare',
  );
});

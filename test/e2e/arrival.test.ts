import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { rebuildSummary } from '../../src/results/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { ArrivalsEndEvent, ConversationEndEvent, ConversationStartEvent, PhaseEvent, RequestRecord, RunEvent } from '../../src/types/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';

/** A small fast workload; `agents` and `extra` complete it. */
function workload(agents: string, extra = '', engine = '{prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, decode_step_ms: 2, output_tokens_min: 6, output_tokens_max: 12}'): string {
  return `name: arrival\nagents: ${agents}\nconversation: {tools: none, system_prompt_tokens: 50, first_user_tokens: 20, max_tokens: 64}\nengine: ${engine}\nmonitor: {enabled: false}\n${extra}`;
}

type Line = { kind: string };

function eventsOf(dir: string): { starts: ConversationStartEvent[]; ends: ConversationEndEvent[]; arrivalsEnd: ArrivalsEndEvent[]; phases: PhaseEvent[] } {
  const events = readJsonl<Line>(join(dir, 'events.jsonl'));
  return {
    starts: events.filter((e): e is ConversationStartEvent & Line => e.kind === 'conversation_start'),
    ends: events.filter((e): e is ConversationEndEvent & Line => e.kind === 'conversation_end'),
    arrivalsEnd: events.filter((e): e is ArrivalsEndEvent & Line => e.kind === 'arrivals_end'),
    phases: events.filter((e): e is PhaseEvent & Line => e.kind === 'phase'),
  };
}

test('an open-loop run starts conversations at the rate over its duration, each with its scheduled start and start lag, and the summary says so', async (t) => {
  const out = join(tempDir(t), 'run');
  const result = await executeRun({ workload: parseWorkload(workload('{rounds: 2, think_time_ms: 0, arrival: {rate_per_s: 5, distribution: constant}}', 'duration: 2s\n'), 'arrival.yaml'), out });
  assert.equal(result.status, 'completed');
  const { starts, ends, arrivalsEnd, phases } = eventsOf(out);
  assert.equal(starts.length, 10, '5/s for 2 s, evenly spaced');
  assert.equal(phases.length, 1);
  const origin = starts[0]!.scheduled_ms;
  starts.forEach((s, i) => {
    assert.ok(Math.abs(s.scheduled_ms - origin - i * 200) < 0.01, `arrival ${i} scheduled at ${s.scheduled_ms - origin} ms`);
    assert.ok(Math.abs(s.start_lag_ms - (s.run_ms - s.scheduled_ms)) < 0.01, 'start lag = actual start − scheduled start');
    assert.equal(s.delayed, false);
    assert.equal(s.phase, 'main');
  });
  assert.ok(Math.abs(origin - phases[0]!.run_ms) < 5, 'the first arrival is due as the phase starts');
  assert.equal(new Set(starts.map((s) => s.conversation)).size, 10, 'a conversation id each');
  assert.deepEqual(ends.map((e) => e.conversation).sort(), starts.map((s) => s.conversation).sort(), 'every conversation that started ended');
  assert.deepEqual(
    arrivalsEnd.map((e) => e.phases),
    [{ main: { scheduled: 10, started: 10, delayed: 0, not_started: 0 } }],
  );
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  // Each conversation runs its rounds in order until the duration stops it: both rounds when its first ended
  // well before the end (on a loaded machine the last arrivals may only get their first round in).
  const phaseEndMs = phases[0]!.run_ms + 2000;
  for (const end of ends) {
    const mine = records.filter((r) => r.conversation === end.conversation);
    assert.deepEqual(
      mine.map((r) => r.round),
      [1, 2].slice(0, end.requests),
      `${end.conversation} sent rounds 1..${end.requests}`,
    );
    const first = mine[0]!;
    if (first.run_ms + first.e2e_ms < phaseEndMs - 500) assert.equal(mine.length, 2, `${end.conversation} ended round 1 before the end: it ran its 2 rounds`);
  }
  assert.equal(
    records.length,
    ends.reduce((n, e) => n + e.requests, 0),
  );
  // The rounds go on (judged above for each conversation whose first round ended well before the end).
  assert.ok(
    records.some((r) => r.round === 2),
    'some conversation ran its second round',
  );
  for (const s of starts) {
    const first = records.find((r) => r.conversation === s.conversation && r.round === 1)!;
    assert.ok(first.run_ms >= s.run_ms && first.run_ms - s.run_ms < 1000, 'its first request goes as it starts');
    assert.equal(first.agent, s.agent);
  }
  const summary = result.summary;
  const a = summary.arrivals!;
  assert.deepEqual([a.scheduled, a.started, a.delayed, a.not_started], [10, 10, 0, 0]);
  assert.equal(a.start_lag.count, 10);
  assert.equal(summary.phases[0]!.arrivals!.arrivals_per_s, 5);
  assert.deepEqual(summary.phases[0]!.load, { kind: 'arrival', from: 5, to: 5, ramp: 'step', length_ms: 2000, start_ms: phases[0]!.run_ms });
  assert.ok(a.active_max >= 1);
  assert.equal(
    a.windows.reduce((n, w) => n + w.starts, 0),
    10,
    'the windows count every start',
  );
  assert.ok(a.windows.some((w) => w.active_mean > 0));
  // A rebuild from the folder alone gives the same arrival figures.
  const rebuilt = await rebuildSummary(out);
  assert.deepEqual(rebuilt.summary.arrivals, summary.arrivals);
  assert.deepEqual(rebuilt.summary.phases[0]!.arrivals, summary.phases[0]!.arrivals);
});

test('a slow engine makes start lag grow while the arrivals keep their rate: delayed ones are counted, waiting ones are not dropped', async (t) => {
  const out = join(tempDir(t), 'run');
  // Each conversation: 2 rounds of 40 tokens at 25 ms a step ≈ 2 s; 2 slots; 4 arrivals/s for 3 s. No reasoning:
  // its seeded 0-32 extra tokens a round could stretch the first two conversations past the 3 s, and no arrival
  // would ever get a slot.
  const slow = workload(
    '{rounds: 2, think_time_ms: 0, arrival: {rate_per_s: 4, distribution: constant, max_active: 2}}',
    'duration: 3s\n',
    '{prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, decode_step_ms: 25, output_tokens_min: 40, output_tokens_max: 40, reasoning: off}',
  );
  const result = await executeRun({ workload: parseWorkload(slow, 'slow.yaml'), out });
  assert.equal(result.status, 'completed');
  const { starts, arrivalsEnd } = eventsOf(out);
  const counts = arrivalsEnd[0]!.phases.main!;
  assert.equal(counts.scheduled, 12, 'all 12 arrivals came due on schedule: the arrival rate did not fall');
  assert.equal(counts.started + counts.not_started, 12, 'none dropped');
  assert.ok(counts.not_started > 0, `${counts.not_started} still waiting for a slot at the end`);
  assert.equal(counts.delayed, starts.filter((s) => s.delayed).length);
  assert.ok(counts.delayed >= 1, 'arrivals that found both slots taken waited');
  assert.deepEqual(
    starts.slice(0, 2).map((s) => s.delayed),
    [false, false],
  );
  // The backlog grows: each later start waits longer (margins: the engine's pace, not the timers, sets it).
  const lags = starts.map((s) => s.start_lag_ms);
  assert.ok(lags[0]! < 200 && lags[1]! < 200, `the first two start on time: ${lags.slice(0, 2).join(', ')}`);
  assert.ok(lags[lags.length - 1]! > 1000, `the last started waited over a second: ${lags.join(', ')}`);
  for (let i = 3; i < starts.length; i += 1) assert.ok(lags[i]! >= lags[i - 2]!, `lag grows: ${lags.join(', ')}`);
  const a = result.summary.arrivals!;
  assert.equal(a.scheduled, 12);
  assert.equal(a.not_started, counts.not_started);
  assert.equal(a.active_max, 2, 'never more than max_active at once');
  assert.deepEqual(a.lagging_phases, ['main'], 'start lag p99 above one arrival gap (250 ms at 4/s): flagged');
  assert.equal(result.summary.phases[0]!.arrivals!.lagging, true);
  assert.equal(result.summary.phases[0]!.arrivals!.arrivals_per_s, 4, 'the arrival rate held');
});

test('`roundload run --set agents.arrival=…`: Poisson arrivals over the duration, their rate, active conversations and start lag in the progress lines and the summary', async (t) => {
  const out = join(tempDir(t), 'run');
  const res = await runCli(
    [
      'run',
      'workloads/smoke.yaml',
      '--duration',
      '3s',
      '--set',
      'agents.arrival={rate_per_s: 6, distribution: poisson}',
      '--set',
      'agents.rounds=2',
      '--set',
      'monitor.enabled=false',
      '--progress',
      '1s',
      '--out',
      out,
    ],
    { timeoutMs: 60_000 },
  );
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /conversations of 2 rounds arriving at 6\/s \(poisson, at most 256 at once\) for 3s/);
  assert.match(res.stderr, /\d+(\.\d)? conv\/s · \d+ active · (lag p99 [\d.]+ m?s|lag –)/, 'the progress lines show the arrival rate, active conversations and start lag');
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const starts = eventsOf(out).starts;
  assert.equal(summary.arrivals!.started, starts.length);
  assert.ok(starts.length >= 6 && starts.length <= 36, `${starts.length} conversations for an expected 18`);
  const gaps = starts.slice(1).map((s, i) => s.scheduled_ms - starts[i]!.scheduled_ms);
  assert.ok(new Set(gaps.map((g) => Math.round(g))).size > gaps.length / 2, 'Poisson gaps are irregular');
  assert.match(res.stdout, new RegExp(`arrivals   ${starts.length} arrived at [\\d.]+/s \\(target 6 conv/s\\) · ${starts.length} started · start lag p50 .* · active mean [\\d.]+, at most \\d+`));
});

test('a run stopped mid-way still accounts for every arrival that came due: started, or waiting and never started', async (t) => {
  const out = join(tempDir(t), 'run');
  const stop = new AbortController();
  // 1.2 s from the first conversation's start, not from the call: a loaded machine may take a second to get
  // the engine up, and the arrivals only come due from the run's start (5/s: 6 by then, at least 3 asked).
  let timer: NodeJS.Timeout | undefined;
  t.after(() => clearTimeout(timer));
  const onEvent = (e: RunEvent): void => {
    if (e.kind === 'conversation_start' && timer === undefined) timer = setTimeout(() => stop.abort(), 1200);
  };
  const slow = workload(
    '{rounds: 3, think_time_ms: 0, arrival: {rate_per_s: 5, distribution: constant, max_active: 1}}',
    'duration: 30s\n',
    '{prefill_ms_per_1k_tokens: 1, kv_transfer_ms: 0, decode_step_ms: 25, output_tokens_min: 40, output_tokens_max: 40}',
  );
  const result = await executeRun({ workload: parseWorkload(slow, 'slow.yaml'), out, signal: stop.signal, onEvent });
  assert.equal(result.status, 'interrupted');
  const { starts, ends, arrivalsEnd } = eventsOf(out);
  assert.equal(arrivalsEnd.length, 1, 'the arrivals are accounted for at the stop');
  const c = arrivalsEnd[0]!.phases.main!;
  assert.ok(c.scheduled >= 3, `${c.scheduled} came due before the stop`);
  assert.equal(c.started + c.not_started, c.scheduled);
  assert.ok(c.not_started >= 1, 'one slot, a slow engine: the others were still waiting');
  assert.equal(c.started, starts.length);
  assert.deepEqual(ends.map((e) => e.conversation).sort(), starts.map((s) => s.conversation).sort());
  assert.equal(result.summary.arrivals!.not_started, c.not_started);
});

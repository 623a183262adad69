import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadWorkload } from '../../src/config/index.js';
import { executeRun, type RunResult } from '../../src/run/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

// Tight deadlines: a main thread blocked for 2 s by a write would make requests hang (and stretch TTFT/ITL).
const SET = [
  'agents.count=4',
  'agents.rounds=5',
  'agents.think_time_ms=50',
  'watchdog.headers_ms=1500',
  'watchdog.first_token_ms=1500',
  'watchdog.stall_ms=1000',
  'watchdog.total_ms=20000',
  'engine.decode_step_ms=10',
  // Answers long enough (the engine's defaults, not the smoke's short ones) that the run lasts several of the
  // client sampler's 1 s windows: the slow disk's lag is read from them.
  'engine.output_tokens_min=24',
  'engine.output_tokens_max=96',
  'monitor.interval_ms=100',
];

async function run(out: string, writeDelayMs: number): Promise<RunResult> {
  const workload = await loadWorkload('workloads/smoke.yaml', { set: SET });
  return executeRun({ workload, out, writer: { writeDelayMs } });
}

test('a results disk that takes 2 s per write leaves TTFT and ITL unchanged, makes no false hangs, and is flagged as writer lag', async (t) => {
  const dir = tempDir(t);
  const fast = await run(join(dir, 'fast'), 0);
  const slow = await run(join(dir, 'slow'), 2000);
  const f = fast.summary;
  const s = slow.summary;
  assert.equal(slow.status, 'completed');
  assert.equal(s.totals.hangs, 0, 'no hang caused by our own disk');
  assert.equal(s.totals.errors, 0);
  assert.equal(s.totals.ok, 20);
  // The slow disk is seen and said: lag over 250 ms in at least one sample window, nothing dropped.
  assert.ok(s.client.writer_lagging_windows >= 1 && (s.client.writer_lag_ms_max ?? 0) >= 1500, JSON.stringify(s.client));
  assert.equal(s.client.writer_dropped_lines, 0);
  // A local disk keeps up: nothing like the slow disk's seconds. A loaded machine delays the writer thread as
  // it delays our loop: the bound widens by twice the loop delay measured in that run.
  const fastLagMs = f.client.writer_lag_ms_max ?? Infinity;
  assert.ok(fastLagMs < 1000 + 2 * f.client.loop_delay_p99_ms_max && fastLagMs < (s.client.writer_lag_ms_max ?? 0), `a local disk keeps up: ${JSON.stringify(f.client)}`);
  // Timings: the slow disk adds nothing beyond what the machine's own event-loop delay explains (a blocked loop
  // would add ≥ 2000 ms). One-sided: a loaded machine can as well stall the fast-disk run (seen: TTFT p99
  // 1069 ms there, 202 ms with the slow disk), which says nothing about the disk.
  const marginMs = 100 + 2 * Math.max(f.client.loop_delay_p99_ms_max, s.client.loop_delay_p99_ms_max);
  const fp = f.phases[0]!;
  const sp = s.phases[0]!;
  for (const metric of ['ttft', 'itl'] as const) {
    for (const q of ['p50_ms', 'p99_ms'] as const) {
      const a = fp[metric][q];
      const b = sp[metric][q];
      assert.ok(b - a <= marginMs, `${metric} ${q}: ${a} ms with a fast disk, ${b} ms with a 2 s disk (margin ${marginMs} ms)`);
    }
  }
  // Drained before the summary: every record and the run_end event are on disk.
  assert.equal(readJsonl(join(slow.dir, 'requests.jsonl')).length, 20);
  const events = readJsonl<{ kind: string; writer_lag_ms?: number }>(join(slow.dir, 'events.jsonl'));
  assert.equal(events.filter((e) => e.kind === 'run_end').length, 1);
  assert.ok(
    events.some((e) => e.kind === 'client_sample' && (e.writer_lag_ms ?? 0) > 250),
    'client_sample events carry writer_lag_ms',
  );
  const manifest = JSON.parse(readFileSync(join(slow.dir, 'run.json'), 'utf8')) as { status: string };
  assert.equal(manifest.status, 'completed');
});

test('a stop (as on SIGTERM) drains a slow writer before the summary: every counted request and run_end are on disk', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = await loadWorkload('workloads/smoke.yaml', { set: [...SET, 'duration=5m'] });
  const stop = new AbortController();
  let requests = 0;
  const running = executeRun({
    workload,
    out,
    signal: stop.signal,
    writer: { writeDelayMs: 1000 },
    onEvent: (e) => {
      if (e.kind === 'request' && ++requests === 12) stop.abort();
    },
  });
  const result = await running;
  assert.equal(result.status, 'interrupted');
  const records = readJsonl(join(out, 'requests.jsonl'));
  assert.ok(records.length >= 12);
  assert.equal(records.length, result.summary.totals.requests, 'the summary counts exactly what is on disk');
  const events = readJsonl<{ kind: string; status?: string }>(join(out, 'events.jsonl'));
  assert.deepEqual(
    events.filter((e) => e.kind === 'run_end').map((e) => e.status),
    ['interrupted'],
  );
  assert.equal(result.summary.client.writer_dropped_lines, 0);
});

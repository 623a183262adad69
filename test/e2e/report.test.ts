import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { rebuildSummary } from '../../src/results/index.js';
import { rebuildReports } from '../../src/commands/report.js';
import type { Summary } from '../../src/analysis/index.js';
import { runCli, tempDir } from '../helpers/tmp.js';

function completeLines(path: string): number {
  const text = readFileSync(path, 'utf8');
  return text
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.trim() !== '').length;
}

test('every run ends with report.html and junit.xml, and rebuilding its folder gives back the live summary', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = await loadWorkload('workloads/smoke.yaml', { agents: 2, rounds: 3 });
  const result = await executeRun({ workload, out });
  assert.ok(existsSync(join(out, 'report.html')) && existsSync(join(out, 'junit.xml')));
  assert.match(readFileSync(join(out, 'junit.xml'), 'utf8'), /<testcase classname="roundload\.smoke" name="no hangs" time="0"\/>/);
  const live = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const rebuilt = await rebuildSummary(out);
  assert.deepEqual(rebuilt.notes, []);
  const s = rebuilt.summary;
  assert.equal(s.run.status, 'completed');
  assert.deepEqual(s.totals, live.totals);
  assert.deepEqual(s.connections, live.connections);
  assert.deepEqual(s.errors_by_class, live.errors_by_class);
  assert.deepEqual(s.windows, live.windows);
  assert.deepEqual(s.thresholds, live.thresholds);
  assert.deepEqual(
    s.phases.map((p) => p.rounds.map((r) => [r.ttft, r.itl, r.e2e])),
    live.phases.map((p) => p.rounds.map((r) => [r.ttft, r.itl, r.e2e])),
    'per-round percentiles, ITL from histograms.json',
  );
  assert.equal(result.summary.totals.requests, 6);

  // Without histograms.json, ITL is approximated (and said so); ttft and e2e stay exact.
  unlinkSync(join(out, 'histograms.json'));
  const approx = await rebuildReports(out);
  assert.match(approx.notes.join('\n'), /histograms\.json missing/);
  assert.deepEqual(
    approx.summary.phases[0]!.rounds.map((r) => r.ttft),
    live.phases[0]!.rounds.map((r) => r.ttft),
  );
  assert.ok(approx.summary.phases[0]!.rounds.every((r) => r.itl.count > 0));
  assert.deepEqual(
    approx.written.map((p) => p.slice(out.length + 1)),
    ['summary.json', 'report.html', 'junit.xml'],
  );
});

test('a run killed with SIGKILL mid-way is reported afterwards with every complete line counted and a torn line skipped', async (t) => {
  const out = join(tempDir(t), 'killed');
  let pid = 0;
  const requests = join(out, 'requests.jsonl');
  const running = runCli(['run', 'workloads/smoke.yaml', '--agents', '4', '--rounds', '400', '--out', out, '--set', 'agents.think_time_ms=20'], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline && !(existsSync(requests) && completeLines(requests) >= 12)) await sleep(100);
  assert.ok(existsSync(requests) && completeLines(requests) >= 12, 'the run wrote request lines');
  process.kill(pid, 'SIGKILL');
  const res = await running;
  assert.equal(res.signal, 'SIGKILL');
  assert.ok(!existsSync(join(out, 'summary.json')), 'a killed run leaves no summary');
  const complete = completeLines(requests);
  appendFileSync(requests, '{"t":"2026-01-01T00:00:00.000Z","run_ms":1,"agent":0,"conversation":"a0-c');

  const report = await runCli(['report', out], { timeoutMs: 30_000 });
  assert.equal(report.code, 0, report.stderr);
  assert.match(report.stderr, new RegExp(`requests\\.jsonl: last line truncated \\(line ${complete + 1}\\), skipped`));
  assert.match(report.stderr, /summary\.json was missing/);
  assert.match(report.stderr, /histograms\.json missing/);
  assert.match(report.stderr, /killed before it finished/);
  assert.match(report.stderr, new RegExp(`smoke · killed · ${complete} requests`));
  assert.deepEqual(
    report.stdout.trim().split('\n'),
    ['summary.json', 'report.html', 'junit.xml'].map((f) => join(out, f)),
  );
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.equal(summary.totals.requests, complete);
  assert.equal(summary.run.status, 'killed');
  assert.ok(summary.run.wall_s > 0 && summary.run.ended_at !== null);
  assert.match(readFileSync(join(out, 'junit.xml'), 'utf8'), /name="run completed" time="0">\n {6}<failure type="status" message="run status is killed">/);
  assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /requests\.jsonl: last line truncated/);
});

test('`roundload report` on a folder that does not exist or is not a run exits 2 without a stack trace', async (t) => {
  const dir = tempDir(t);
  for (const [path, message] of [
    [join(dir, 'nope'), /no such folder/],
    [dir, /not a roundload results folder/],
  ] as const) {
    const res = await runCli(['report', path], { timeoutMs: 30_000 });
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, message);
    assert.doesNotMatch(res.stderr, /\n\s+at /);
  }
});

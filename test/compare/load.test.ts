// Reading a run for a comparison: windows from summary.json, each request's latencies in the window it was sent in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRun } from '../../src/compare/index.js';
import { tempDir } from '../helpers/tmp.js';

const win = (start: number) => ({ phase: 'main', start_s: start, end_s: start + 1, requests: 1, ok: 1, errors: 0, hangs: 0, output_tokens: 10, output_tokens_per_s: 10, steady: true });
const rec = (runMs: number, e2eMs: number) => ({
  t: new Date(Date.UTC(2026, 11, 5) + runMs).toISOString(),
  conversation: 'a0-c1',
  status: 'ok',
  phase: 'main',
  run_ms: runMs,
  e2e_ms: e2eMs,
  ttft_ms: e2eMs - 100,
  round: 1,
  agent: 0,
});

test('a request sent in a window summary.json does not list (nothing ended or streamed there) counts in the next one listed, never left out', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ name: 'r', status: 'completed', workload: { window_s: 1 }, labels: {} }));
  // Requests sent at 0.2 s and 0.4 s whose first token came after 1 s: the run's first window held no end and
  // no token, so the summary starts at 1 s (windows are by end time there).
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({ run: { name: 'r', status: 'completed' }, totals: {}, thresholds: {}, window: { window_s: 1 }, windows: [win(1), win(3)], phases: [{ phase: 'main' }] }),
  );
  const records = [rec(200, 1500), rec(400, 2900), rec(1200, 300), rec(2100, 1200), rec(3100, 200)];
  writeFileSync(join(dir, 'requests.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  const run = await loadRun(dir);
  const windows = run.phases.get('main')!.windows;
  assert.deepEqual(
    windows.map((w) => [w.startS, w.e2e.total]),
    [
      [1, 3],
      [3, 2],
    ],
    'sent at 0.2 and 0.4 s → the 1 s window; 1.2 s → its own; 2.1 s (window 2 not listed) → the 3 s window, where it ended',
  );
  assert.equal(
    windows.reduce((n, w) => n + w.ttft.total, 0),
    records.length,
  );
});

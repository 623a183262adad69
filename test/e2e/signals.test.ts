import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import type { Summary } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';

function lines(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').length;
}

/** Resolves once `path` has at least `n` lines; bounded. */
async function waitForLines(path: string, n: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (lines(path) < n) {
    if (Date.now() > until) throw new Error(`${path} did not reach ${n} lines in ${timeoutMs} ms`);
    await sleep(50);
  }
}

function workloadFile(dir: string, engine: string): string {
  const file = join(dir, 'long.yaml');
  // No tools: every answer is content of the engine's output length (tool-call answers are short).
  writeFileSync(file, `name: long\nduration: 5m\nagents: {count: 4, rounds: 4, think_time_ms: 20}\nconversation: {tools: none}\nengine: ${engine}\n`);
  return file;
}

function assertComplete(out: string): { summary: Summary; records: RequestRecord[] } {
  for (const f of ['run.json', 'requests.jsonl', 'events.jsonl', 'histograms.json', 'summary.json']) assert.ok(existsSync(join(out, f)), `${f} written`);
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { status: string; ended_at: string | null };
  assert.equal(manifest.status, 'interrupted');
  assert.ok(manifest.ended_at !== null);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(summary.run.status, 'interrupted');
  assert.equal(summary.totals.requests, records.length, 'summary.json counts every line of requests.jsonl');
  assert.equal(summary.totals.ok + summary.totals.errors + summary.totals.hangs, records.length);
  const events = readJsonl<{ kind: string; status?: string }>(join(out, 'events.jsonl'));
  const end = events.filter((e) => e.kind === 'run_end');
  assert.equal(end.length, 1);
  assert.equal(end[0]!.status, 'interrupted');
  const histograms = JSON.parse(readFileSync(join(out, 'histograms.json'), 'utf8')) as { histograms: { metric: string; round: number; count: number }[] };
  const e2eAll = histograms.histograms.find((h) => h.metric === 'e2e' && h.round === 0);
  assert.equal(e2eAll?.count ?? 0, summary.totals.ok, 'histograms.json holds every ok request');
  return { summary, records };
}

test('SIGTERM during a long run: requests in flight finish within the grace, the folder is complete, exit 130 within seconds', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  let pid = 0;
  let signalledAt = 0;
  const running = runCli(['run', workloadFile(dir, '{decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 24}'), '--out', out], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  await waitForLines(join(out, 'requests.jsonl'), 12, 30_000);
  signalledAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const res = await running;
  const tookMs = Date.now() - signalledAt;
  assert.equal(res.code, 130, res.stderr);
  assert.ok(tookMs < 8000, `ended ${tookMs} ms after SIGTERM`);
  assert.match(res.stderr, /SIGTERM: stopping/);
  const { records } = assertComplete(out);
  assert.ok(records.length >= 12);
  // Fast requests end well inside the 2 s grace: none is cut off.
  assert.deepEqual(records.filter((r) => r.status !== 'ok').map((r) => r.error?.class), []);
});

test('requests still running when the grace ends are recorded as aborted, and the folder is still complete', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  let pid = 0;
  // One request decodes for about 20 s: far past the grace.
  const running = runCli(['run', workloadFile(dir, '{decode_step_ms: 200, output_tokens_min: 100, output_tokens_max: 100}'), '--out', out], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  await waitForLines(join(out, 'events.jsonl'), 2, 30_000); // run_start and phase: agents are sending
  await sleep(500);
  const signalledAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const res = await running;
  const tookMs = Date.now() - signalledAt;
  assert.equal(res.code, 130, res.stderr);
  assert.ok(tookMs >= 1800, `the in-flight requests got their grace (${tookMs} ms)`);
  assert.ok(tookMs < 10_000, `ended ${tookMs} ms after SIGTERM`);
  const { records } = assertComplete(out);
  assert.equal(records.length, 4, 'each agent\'s in-flight request is recorded');
  assert.ok(records.every((r) => r.status === 'error' && r.error?.class === 'aborted'), JSON.stringify(records.map((r) => r.error)));
});

test('a second SIGTERM exits at once with 130', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  let pid = 0;
  const running = runCli(['run', workloadFile(dir, '{decode_step_ms: 200, output_tokens_min: 100, output_tokens_max: 100}'), '--out', out], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  await waitForLines(join(out, 'events.jsonl'), 2, 30_000);
  await sleep(300);
  process.kill(pid, 'SIGTERM');
  await sleep(200);
  const signalledAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const res = await running;
  const tookMs = Date.now() - signalledAt;
  assert.equal(res.code, 130);
  assert.ok(tookMs < 1500, `exited ${tookMs} ms after the second signal (the grace is 2 s)`);
  assert.match(res.stderr, /SIGTERM again: exiting now/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, tempDir } from '../helpers/tmp.js';

function lines(path: string): number {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '').length
    : 0;
}

test('--duration 25d (past one Node timer) keeps running instead of completing at once, and stops on SIGTERM', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  const file = join(dir, 'w.yaml');
  writeFileSync(
    file,
    'name: long\nagents: {count: 2, rounds: 4, think_time_ms: 0}\nconversation: {tools: none}\nmonitor: {enabled: false}\nengine: {decode_step_ms: 1, output_tokens_min: 4, output_tokens_max: 8}\n',
  );
  let pid = 0;
  let exited = false;
  const running = runCli(['run', file, '--duration', '25d', '--out', out], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) }).finally(() => (exited = true));
  // One conversation per agent is 8 requests: 24 records mean agents went on to fresh conversations, which
  // only a run whose time is not up does (the 1 ms timer of old ended it after the first requests).
  const until = Date.now() + 40_000;
  while (lines(join(out, 'requests.jsonl')) < 24 && !exited && Date.now() < until) await sleep(100);
  assert.equal(exited, false, `the run ended by itself after ${lines(join(out, 'requests.jsonl'))} requests`);
  assert.ok(lines(join(out, 'requests.jsonl')) >= 24);
  process.kill(pid, 'SIGTERM');
  const res = await running;
  assert.equal(res.code, 130, res.stderr);
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { status: string };
  assert.equal(manifest.status, 'interrupted');
});

// An A/B the way a user runs it against a real deployment (issue 23): each arm's setup restarts the engine — here
// `roundload engine` as a separate process — with an environment variable that changes its decode speed
// (ROUNDLOAD_ENGINE_SET, standing in for `systemctl set-environment SGLANG_…; systemctl restart sglang`),
// waits for /health, runs, and the teardown stops it. The sequential rule finds the arm whose engine was
// restarted faster at decode better, from the engine's own speed, not from a workload setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { parseAbFile } from '../../src/config/index.js';
import { runAb } from '../../src/compare/index.js';
import { freePort } from '../helpers/procs.js';
import { tempDir } from '../helpers/tmp.js';
import { cliCommand } from '../helpers/root.js';

test('arms restart a separate engine with ROUNDLOAD_ENGINE_SET; health waits; the faster decode is better', async (t) => {
  const dir = tempDir(t);
  const port = await freePort();
  const pidFile = join(dir, 'engine.pid');
  writeFileSync(join(dir, 'engine.yaml'), stringify({ topology: 'single', decode_step_ms: 4, output_tokens_min: 16, output_tokens_max: 24 }));
  const start = (speedup: number): string =>
    `ROUNDLOAD_ENGINE_SET="decode_speedup=${speedup}" ${cliCommand()} engine --port ${port} --router-metrics-port 0 --settings ${JSON.stringify(join(dir, 'engine.yaml'))} >> ${JSON.stringify(join(dir, 'engine.log'))} 2>&1 & echo $! > ${JSON.stringify(pidFile)}`;
  // Stop the engine and wait (bounded by command_timeout_s) until it is gone, so the next arm's can take the port.
  const stop = `kill $(cat ${JSON.stringify(pidFile)}); while kill -0 $(cat ${JSON.stringify(pidFile)}) 2>/dev/null; do sleep 0.1; done`;
  t.after(() => {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const health = { url: `http://127.0.0.1:${port}/health`, timeout_s: 30, interval_ms: 100 };
  const file = {
    workload: {
      window_s: 0.5,
      duration: '2s',
      target: { url: `http://127.0.0.1:${port}` },
      agents: { count: 2, rounds: 50, think_time_ms: 0 },
      conversation: { tools: 'none', system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 24 },
    },
    command_timeout_s: 30,
    // Decided at 3 pairs on a quiet machine; up to 6 on a loaded one (in CI beside four other test files the
    // faster arm measured +118%, +72%, +48%: +79% [-9.5, +168] after 3; beside four helpers' work +62.6% [+4.4, +120.8] after 5).
    until: { min_effect_pct: 10, max_pairs: 6, figures: ['decode'] },
    arms: [
      { name: 'reverted', setup: start(1), health, teardown: stop },
      { name: 'faster', setup: start(2), health, teardown: stop },
    ],
  };
  const plan = await parseAbFile(stringify(file), join(dir, 'ab.yaml'));
  const lines: string[] = [];
  const result = await runAb({ plan, out: join(dir, 'ab'), log: (l) => lines.push(l) });
  // The pairs run: one call a pair; the runs planned past the decision are `not run`.
  const calls = result.comparisons[0]!.phases[0]!.rows.find((r) => r.figure === 'decode_tokens_per_s')!.calls;
  const runs = 2 * calls.length;
  assert.ok([6, 8, 10, 12].includes(runs), `${runs} runs: whole pairs, 3 to 6`);
  assert.deepEqual(
    result.runs.map((r) => r.status),
    result.runs.map((_, k) => (k < runs ? 'completed' : 'not run')),
    lines.join('\n'),
  );
  assert.equal(lines.filter((l) => /^ab: arm (reverted|faster): http:\/\/127\.0\.0\.1:\d+\/health healthy after \d+ polls?$/.test(l)).length, runs);
  const decode = calls.at(-1)!;
  assert.equal(decode.verdict, 'better', lines.join('\n'));
  assert.ok(decode.estimate! > 30, `decode +${decode.estimate}%`);
  // Each engine said which settings its environment gave it, in the arms' order A B, B A, A B, B A, A B.
  const said = [...readFileSync(join(dir, 'engine.log'), 'utf8').matchAll(/settings from ROUNDLOAD_ENGINE_SET: decode_speedup=(\d)\n/g)].map((m) => m[1]);
  assert.deepEqual(said, ['1', '2', '2', '1', '1', '2', '2', '1', '1', '2', '2', '1'].slice(0, runs));
});

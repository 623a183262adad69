// A run that survives an engine restart: the engine, a separate process, is killed mid-run and started again
// on the same port a few seconds later. The agents back off (each wait recorded on the next request) instead
// of burning their rounds in milliseconds, and carry on once the engine is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { engineProcess, readJsonl, tempDir, type EngineProcess } from '../helpers/tmp.js';

test('killed and restarted on the same port 3 s later: the agents back off, then finish their rounds ok', async (t) => {
  let engine: EngineProcess = await engineProcess(t);
  const url = engine.url;
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: restart
target: {url: "${url}"}
agents: {count: 2, rounds: 24, think_time_ms: 50}
conversation: {system_prompt_tokens: 50, first_user_tokens: 20, max_tokens: 16, tools: none}
watchdog: {connect_ms: 2000, headers_ms: 5000, first_token_ms: 5000, stall_ms: 5000, total_ms: 10000}
monitor: {enabled: false, canary_interval_s: 0}
`,
    'restart.yaml',
  );
  let oks = 0;
  // Widened on purpose: it is assigned in a callback, which narrowing does not see.
  let outage = null as Promise<void> | null;
  const restart = async (): Promise<void> => {
    await engine.kill();
    await sleep(3000);
    engine = await engineProcess(t, engine.port);
  };
  await executeRun({
    workload,
    out,
    onEvent: (e) => {
      if (e.kind !== 'request' || e.record.status !== 'ok') return;
      oks += 1;
      // A few rounds in, kill the engine (once).
      if (oks === 4 && outage === null) outage = restart();
    },
  });
  assert.notEqual(outage, null, 'the engine was killed mid-run');
  await outage;
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  for (const agent of [0, 1]) {
    const mine = records.filter((r) => r.agent === agent).sort((a, b) => a.run_ms - b.run_ms);
    const failed = mine.filter((r) => r.status !== 'ok');
    assert.ok(failed.length > 0, `agent ${agent} met the outage`);
    assert.ok(
      failed.every((r) => r.error !== null && ['connection_refused', 'connection_reset', 'keepalive_race'].includes(r.error.class)),
      JSON.stringify(failed.map((r) => r.error)),
    );
    // Backing off 250 ms, 500 ms, 1 s, 2 s… a 3 s outage costs a handful of rounds, not all that were left.
    assert.ok(failed.length <= 8, `agent ${agent} spent ${failed.length} rounds on the outage`);
    const waits = mine.map((r) => r.backoff_ms ?? 0).filter((ms) => ms > 0);
    assert.ok(waits.length >= 2, `agent ${agent} waits: ${waits.join(', ')}`);
    assert.equal(waits[0], 250);
    for (let i = 1; i < waits.length; i += 1) assert.ok(waits[i] === waits[i - 1]! * 2 || waits[i] === 10_000, `doubling: ${waits.join(', ')}`);
    const last = mine[mine.length - 1]!;
    assert.equal(last.status, 'ok', `agent ${agent} is back on its feet by its last round`);
    assert.equal(mine.length, 24, 'every round was sent');
  }
});

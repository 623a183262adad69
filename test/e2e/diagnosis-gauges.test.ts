// The monitor's gauge verdicts reach the diagnosis: an engine whose inflight gauge is pinned (the monitor's
// `pin` gauge fault: the gauge stuck at 1 and no flow) is called `engine`, on the direct path, with no canaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';

test('a pinned engine gauge with hung requests: the diagnosis is engine, naming the gauge', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: pinned
agents: {count: 2, rounds: 2, think_time_ms: 20}
conversation: {max_tokens: 32}
watchdog: {headers_ms: 1500, first_token_ms: 1500, stall_ms: 1500, total_ms: 8000}
monitor: {interval_ms: 100, pin_after_s: 1}
engine: {gauge_fault: {kind: pin}}
`,
    'pinned.yaml',
  );
  await executeRun({ workload, out });
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.ok(summary.totals.hangs > 0);
  assert.ok(summary.gauges.some((g) => g.verdict === 'pinned' && g.name.endsWith('num_prefill_inflight_queue_reqs')), JSON.stringify(summary.gauges.map((g) => [g.name, g.verdict])));
  assert.equal(summary.diagnosis.verdict, 'engine', summary.diagnosis.evidence.join('\n'));
  assert.match(summary.diagnosis.evidence.join('\n'), /num_prefill_inflight_queue_reqs.* is pinned at 1 /);
});

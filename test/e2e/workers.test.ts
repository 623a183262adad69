import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

const yaml = `
name: workers
agents: {count: 4, rounds: 3, think_time_ms: 0, workers: 2}
conversation: {system_prompt_tokens: 100, max_tokens: 32}
engine: {decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 16, reasoning: off}  # max_tokens 32 would cut tool calls after reasoning
monitor: {enabled: false}
`;

test('agents spread over two worker threads: every request recorded once, sockets kept apart per thread, ITL merged', async (t) => {
  const out = join(tempDir(t), 'run');
  const result = await executeRun({ workload: parseWorkload(yaml, 'workers.yaml'), out });
  assert.equal(result.status, 'completed');
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(records.length, 12);
  assert.ok(records.every((r) => r.status === 'ok'));
  assert.deepEqual([...new Set(records.map((r) => r.conversation))].sort(), ['a0-c1', 'a1-c1', 'a2-c1', 'a3-c1']);
  // Agents 0 and 2 on worker 0, 1 and 3 on worker 1; one keep-alive socket each.
  for (const r of records) assert.equal(r.connection?.id.split('.')[0], `w${r.agent % 2}`);
  assert.equal(new Set(records.map((r) => r.connection?.id)).size, 4);
  assert.ok(
    records.every((r) => r.run_ms >= 0 && r.run_ms < 60_000),
    "run_ms is on the main thread's clock",
  );
  assert.ok(result.summary.phases[0]!.itl.count > 0, "the workers' ITL histograms reached the summary");
  const phases = readJsonl<{ kind: string }>(join(out, 'events.jsonl')).filter((e) => e.kind === 'phase');
  assert.equal(phases.length, 1, 'the phase is announced once');
  const samples = readJsonl<{ kind: string; thread?: number }>(join(out, 'events.jsonl')).filter((e) => e.kind === 'client_sample');
  assert.ok(samples.some((s) => s.thread === 0) && samples.some((s) => s.thread === 1), 'each worker thread samples its own event loop');
});

test("a shard split over worker threads runs exactly the shard's agents", async (t) => {
  const out = join(tempDir(t), 'run');
  await executeRun({ workload: parseWorkload(yaml, 'workers.yaml'), out, shard: { index: 1, count: 2 } });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.deepEqual([...new Set(records.map((r) => r.agent))].sort(), [1, 3]);
  assert.equal(records.length, 6);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { totals: { ok: number } };
  assert.equal(summary.totals.ok, 6);
});

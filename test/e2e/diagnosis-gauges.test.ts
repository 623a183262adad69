// The monitor's gauge verdicts reach the diagnosis: an engine whose inflight gauge is pinned (the monitor's
// `pin` gauge fault: the gauge stuck at 1 and no flow) is called `engine`, on the direct path, with no canaries;
// and the verdicts' holes closed: long healthy streams are not pinned, a frozen target beside a healthy one is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tempDir } from '../helpers/tmp.js';
import { quietClient } from '../helpers/quiet-client.js';
import { spawnEngine } from '../helpers/procs.js';

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
  await executeRun({ workload, out, clientSample: quietClient });
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.ok(summary.totals.hangs > 0);
  assert.ok(
    summary.gauges.some((g) => g.verdict === 'pinned' && g.name.endsWith('num_prefill_inflight_queue_reqs')),
    JSON.stringify(summary.gauges.map((g) => [g.name, g.verdict])),
  );
  assert.equal(summary.diagnosis.verdict, 'engine', summary.diagnosis.evidence.join('\n'));
  assert.match(summary.diagnosis.evidence.join('\n'), /num_prefill_inflight_queue_reqs.* is pinned at 1 /);
});

test('long healthy streams are never pinned, and a frozen /metrics beside the engine is judged on its own counters', async (t) => {
  // The issue's picture, scaled to seconds (pin_after_s 2): four streams of ~3 s on the engine (its own
  // process), whose counters move only when a request ends, and a fake SGLang /metrics frozen at one request.
  const fake = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(
      '# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name="m"} 1.0\n# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total{model_name="m"} 500.0\n# TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate{model_name="m"} 0.5\n',
    );
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  t.after(() => fake.close());
  const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/metrics`;
  const engine = await spawnEngine(t, { decode_step_ms: 80, decode_step_ms_per_running: 0, output_tokens_min: 36, output_tokens_max: 40, stats_interval_steps: 0 });
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: streams
target: {url: "${engine.url}"}
agents: {count: 4, rounds: 2, think_time_ms: 0}
conversation: {max_tokens: 40, tools: none}
watchdog: {headers_ms: 5000, first_token_ms: 5000, stall_ms: 5000, total_ms: 20000}
monitor: {interval_ms: 100, pin_after_s: 2, targets: [${engine.targets.map((x) => `{name: ${x.name}, url: "${x.url}"}`).join(', ')}, {name: fake, url: "${fakeUrl}"}]}
`,
    'streams.yaml',
  );
  await executeRun({ workload, out, clientSample: quietClient });
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.equal(summary.totals.ok, 8, JSON.stringify(summary.totals));
  const verdict = (target: string, name: string) => summary.gauges.find((g) => g.target === target && g.name === name)!;
  // The streams run on the decode server (the embedded deployment is PD: router, prefill, decode).
  const running = verdict('decode', 'sglang:num_running_reqs');
  assert.notEqual(running.verdict, 'pinned', running.evidence.join('\n'));
  assert.ok(running.longest_nonzero_s >= 2, `steady ${running.longest_nonzero_s} s: long enough to have been called pinned`);
  assert.equal(verdict('prefill', 'sglang:cache_hit_rate').verdict, 'ratio');
  const frozen = verdict('fake', 'sglang:num_running_reqs');
  assert.equal(frozen.verdict, 'pinned', frozen.evidence.join('\n'));
  assert.equal(frozen.flow?.client_counted, false, 'the client completed requests elsewhere: not counted for the fake target');
  assert.equal(verdict('fake', 'sglang:cache_hit_rate').verdict, 'ratio');
});

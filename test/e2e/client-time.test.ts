// The client's own time per request: what opening its socket cost (connect_ms, tls_ms), how long it waited
// to go out (queued_ms), and the start-up rush of many agents opening sockets at once, shown beside the
// TTFT it is part of.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { formatSummary } from '../../src/report/index.js';
import { STARTUP_OPENING, type Summary } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

test('sixteen agents starting together through the TLS hop: each first request says what opening its socket cost, and the start-up rush is counted', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: rush
target: {via: {kind: hop}}
agents: {count: 16, rounds: 2, think_time_ms: 10}
conversation: {max_tokens: 8, tools: none}
monitor: {canary_interval_s: 0}
`,
    'rush.yaml',
  );
  await executeRun({ workload, out });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  const first = records.filter((r) => r.connection?.nth === 1);
  const reused = records.filter((r) => (r.connection?.nth ?? 0) > 1);
  assert.ok(first.length >= 16 && reused.length > 0, `${first.length} first, ${reused.length} reused`);
  for (const r of first) {
    assert.ok(typeof r.connection!.connect_ms === 'number' && r.connection!.connect_ms >= 0, JSON.stringify(r.connection));
    assert.ok(typeof r.connection!.tls_ms === 'number' && r.connection!.tls_ms > 0, 'TLS to the hop');
    assert.ok(typeof r.connection!.queued_ms === 'number');
  }
  for (const r of reused) assert.deepEqual([r.connection!.connect_ms, r.connection!.tls_ms, r.connection!.opening], [null, null, null]);
  assert.ok(
    first.some((r) => (r.connection!.opening ?? 0) >= STARTUP_OPENING),
    `opening at once: ${first.map((r) => r.connection!.opening).join(' ')}`,
  );
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const o = summary.client.opening!;
  assert.ok(o.sockets >= 16 && o.tls_ms_mean! > 0 && o.startup_requests > 0, JSON.stringify(o));
  assert.match(
    formatSummary(summary, out),
    /opening one: connect [\d.]+ ms \(max [\d.]+ ms\), TLS [\d.]+ ms \(max [\d.]+ ms\) {2}· {2}\d+ requests went out in the client's start-up rush \(8\+ sockets opening at once\)/,
  );
});

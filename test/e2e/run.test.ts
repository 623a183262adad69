import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';

test('the smoke workload runs on the embedded engine: 32 ok requests, growing prompts, one keep-alive socket per agent', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = await loadWorkload('workloads/smoke.yaml');
  const result = await executeRun({ workload, out });
  assert.equal(result.status, 'completed');
  for (const f of ['run.json', 'requests.jsonl', 'events.jsonl', 'gauges.jsonl', 'histograms.json', 'summary.json']) {
    assert.ok(existsSync(join(out, f)), `${f} written`);
  }
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(records.length, 32);
  assert.ok(
    records.every((r) => r.status === 'ok'),
    JSON.stringify(records.filter((r) => r.status !== 'ok').slice(0, 2)),
  );
  const byConversation = new Map<string, RequestRecord[]>();
  for (const r of records) byConversation.set(r.conversation, [...(byConversation.get(r.conversation) ?? []), r]);
  assert.equal(byConversation.size, 4);
  for (const [id, rs] of byConversation) {
    rs.sort((a, b) => a.round - b.round);
    assert.deepEqual(
      rs.map((r) => r.round),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    for (let i = 1; i < rs.length; i += 1) assert.ok(rs[i]!.prompt_tokens! > rs[i - 1]!.prompt_tokens!, `${id} round ${i + 1} prompt grows`);
    // Keep-alive: one socket per agent, its nth counting 1..8.
    assert.equal(new Set(rs.map((r) => r.connection?.id)).size, 1, `${id} stays on one socket`);
    assert.deepEqual(
      rs.map((r) => r.connection?.nth),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.ok(
      rs.slice(1).every((r) => (r.cached_tokens ?? 0) > 0),
      'later rounds hit the prefix cache',
    );
  }
  assert.equal(new Set(records.map((r) => r.connection?.id)).size, 4);
  assert.ok(records.some((r) => r.tool_calls.length > 0) && records.some((r) => r.tool_calls.length === 0), 'both tool-call and content rounds');
  assert.ok(records.every((r) => r.ttft_ms! > 0 && r.e2e_ms >= r.ttft_ms! && !r.tokens_estimated));
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.equal(summary.totals.ok, 32);
  assert.equal(summary.phases[0]!.rounds.length, 8);
  assert.ok(summary.throughput.output_tokens_per_s > 0);
  assert.equal(summary.connections.distinct, 4);
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { status: string; target: { embedded: boolean } };
  assert.equal(manifest.status, 'completed');
  assert.equal(manifest.target.embedded, true);
});

test('`roundload run --agents 6 --rounds 5 --out DIR` writes 30 request lines and a 5-round summary', async (t) => {
  const out = join(tempDir(t), 'r');
  const res = await runCli(['run', 'workloads/smoke.yaml', '--agents', '6', '--rounds', '5', '--out', out, '--label', 'arm=a']);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(readJsonl(join(out, 'requests.jsonl')).length, 30);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.equal(summary.phases[0]!.rounds.length, 5);
  assert.deepEqual(summary.run.labels, { arm: 'a' });
  assert.match(res.stdout, /^round +req +ok/m, 'the per-round table is printed');
  assert.match(res.stdout, /30 \(30 ok, 0 errors, 0 hangs\)/);
});

test('`roundload validate` on a typo and a wrong type exits 2 naming line and column, without a stack trace', async (t) => {
  const file = join(tempDir(t), 'bad.yaml');
  writeFileSync(file, 'agents:\n  rouns: 3\n  count: four\n');
  const res = await runCli(['validate', file]);
  assert.equal(res.code, 2);
  assert.match(res.stderr, /bad\.yaml:2:3 +agents\.rouns +unknown key "rouns" \(did you mean "rounds"\?\)/);
  assert.match(res.stderr, /bad\.yaml:3:10 +agents\.count +expected a number/);
  assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
});

test('a target nobody listens on ends the run with exit 3 and a clear message', async (t) => {
  const out = join(tempDir(t), 'r');
  const res = await runCli(['run', 'workloads/smoke.yaml', '--target', 'http://127.0.0.1:9', '--out', out]);
  assert.equal(res.code, 3, res.stderr);
  assert.match(res.stderr, /unreachable.*connection_refused/);
});

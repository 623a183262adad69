// The incident's reproducer, as a new user runs it: `roundload run workloads/harness-hang.yaml` on the
// embedded engine, through the built-in hop, with the monitor and canaries on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import type { CanaryEvent, RequestRecord, RunEvent } from '../../src/types/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';

test('`roundload run workloads/harness-hang.yaml` finishes with 96 ok requests through the hop, contexts growing on reused sockets, canaries on both paths', async (t) => {
  const out = join(tempDir(t), 'run');
  const res = await runCli(['run', 'workloads/harness-hang.yaml', '--out', out], { timeoutMs: 60_000 });
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /96 \(96 ok, 0 errors, 0 hangs\)/);
  assert.match(res.stdout, /\(hop\)/);
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(records.length, 96);
  assert.ok(records.every((r) => r.status === 'ok' && r.path === 'hop' && r.connection?.tls?.authorized === true));
  for (let agent = 0; agent < 4; agent += 1) {
    const mine = records.filter((r) => r.agent === agent).sort((a, b) => a.round - b.round);
    assert.equal(mine.length, 24);
    assert.deepEqual(
      mine.map((r) => r.connection?.nth),
      Array.from({ length: 24 }, (_, i) => i + 1),
      `agent ${agent} reuses one socket`,
    );
    assert.ok(mine[23]!.prompt_tokens! > 3 * mine[0]!.prompt_tokens!, 'the context grows round after round');
  }
  const canaries = readJsonl<RunEvent>(join(out, 'events.jsonl')).filter((e): e is CanaryEvent => e.kind === 'canary');
  assert.ok(canaries.filter((c) => c.leg === 'proxied').length >= 3 && canaries.filter((c) => c.leg === 'direct').length >= 3);
  assert.ok(
    canaries.every((c) => c.ok),
    JSON.stringify(canaries.filter((c) => !c.ok)),
  );
  assert.ok(readJsonl(join(out, 'gauges.jsonl')).length > 0, 'the monitor scraped the engine');
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.equal(summary.totals.ok, 96);
  assert.equal(summary.diagnosis.verdict, 'none');
});

// The hang diagnosis in whole runs: a stalling hop in front of a healthy engine is called `proxy`; a healthy
// hop in front of an engine that cannot answer in time is called `engine`. The canaries make the call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { CanaryEvent, RequestRecord, RunEvent } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { quietClient } from '../helpers/quiet-client.js';

const BASE = `
agents: {count: 2, rounds: 4, think_time_ms: 50}
conversation: {max_tokens: 16}
watchdog: {connect_ms: 1500, headers_ms: 1200, first_token_ms: 1500, stall_ms: 2000, total_ms: 10000}
monitor: {canary_interval_s: 0.5, canary_timeout_ms: 1000}
`;

async function run(t: import('node:test').TestContext, yaml: string, set: string[] = []): Promise<{ summary: Summary; records: RequestRecord[]; canaries: CanaryEvent[] }> {
  const out = join(tempDir(t), 'run');
  // The client's own health pinned quiet: these verdicts are about the hop and the engine, not this machine's load.
  await executeRun({ workload: parseWorkload(`name: diag\n${yaml}${BASE}`, 'diag.yaml', { set }), out, clientSample: quietClient });
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const canaries = readJsonl<RunEvent>(join(out, 'events.jsonl')).filter((e): e is CanaryEvent => e.kind === 'canary');
  return { summary, records: readJsonl<RequestRecord>(join(out, 'requests.jsonl')), canaries };
}

test('a hop that stalls reused connections in front of a healthy engine: the diagnosis is proxy', async (t) => {
  // Six rounds and a canary every 250 ms: enough hung slots on the proxied leg, and ok ones on the direct leg,
  // that the legs differ clearly even when a loaded machine stretches the run. A direct canary gets 2.5 s (the
  // healthy engine answers well within it on a loaded machine) and is never held back by the ones still out.
  const { summary, records, canaries } = await run(t, 'target: {via: {kind: hop, faults: [{kind: stall, after_requests: 1}]}}', [
    'agents.rounds=6',
    'monitor.canary_interval_s=0.25',
    'monitor.canary_timeout_ms=2500',
    'monitor.canary_concurrency=16',
  ]);
  assert.ok(records.some((r) => r.status === 'hang') && records.every((r) => r.path === 'hop'));
  assert.ok(canaries.some((c) => c.leg === 'direct') && canaries.some((c) => c.leg === 'proxied'), 'canaries on both legs');
  assert.ok(
    canaries.filter((c) => c.leg === 'direct').every((c) => c.ok && c.path === 'direct'),
    'the engine answers every direct canary',
  );
  assert.ok(
    canaries.some((c) => c.leg === 'proxied' && c.status === 'hang' && c.path === 'hop'),
    'a proxied canary hangs too',
  );
  assert.equal(summary.diagnosis.verdict, 'proxy', summary.diagnosis.evidence.join('\n'));
  assert.match(summary.diagnosis.evidence.join('\n'), /requests hung .*by path: hop/);
});

test('a healthy hop in front of an engine too slow to give a first token: the diagnosis is engine', async (t) => {
  // 20 s per 1000 uncached prompt tokens: every agent request and canary queues behind long prefills, and
  // nothing completes in the run however the machine's load stretches it (a few completions would make it
  // engine_overloaded, rightly).
  const { summary, records, canaries } = await run(t, 'target: {via: {kind: hop}}\nengine: {prefill_ms_per_1k_tokens: 5000}', ['agents.rounds=3']);
  assert.ok(
    records.every((r) => r.status === 'hang' && r.hang?.phase === 'first_token'),
    JSON.stringify(records.map((r) => [r.status, r.hang?.phase])),
  );
  assert.ok(
    canaries.some((c) => c.leg === 'direct' && !c.ok),
    'direct canaries fail too',
  );
  // At or behind the engine: `engine`, or `engine_overloaded` when a short canary's prefill got through in a
  // slice or two (work flowed) — how many do depends on the machine's load, the side of the hop does not.
  assert.ok(['engine', 'engine_overloaded'].includes(summary.diagnosis.verdict), `${summary.diagnosis.verdict}: ${summary.diagnosis.evidence.join('\n')}`);
  assert.match(summary.diagnosis.evidence.join('\n'), /direct canaries failed/);
});

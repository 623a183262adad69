// The monitor in whole runs on the embedded PD deployment: gauges.jsonl of its router, prefill and decode at the
// set interval, verdicts in the summary and the terminal, a down target recorded without stopping the run, the
// monitor switched off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { ScrapeEvent } from '../../src/types/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import { LoopDelay } from '../helpers/loop-delay.js';

const BASE = `
agents: {count: 3, rounds: 6, think_time_ms: 50}
conversation: {system_prompt_tokens: 300, max_tokens: 64}
engine: {decode_step_ms: 4}
`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

test("a run scrapes the embedded deployment's router, prefill and decode every monitor.interval_ms into gauges.jsonl and judges every gauge", async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(`${BASE}monitor: {interval_ms: 200}\n`, 'monitor.yaml');
  const loop = new LoopDelay();
  const result = await executeRun({ workload, out });
  loop.stop();
  // Each scrape's time can be late by how late this process's loop ran (the engine, the monitor and the agents
  // share it): the bounds below widen by that, measured, never less than on an idle machine.
  const margin = loop.marginMs();
  t.diagnostic(`loop delay margin ${margin.toFixed(0)} ms`);
  assert.equal(result.status, 'completed');
  const scrapes = readJsonl<ScrapeEvent>(join(out, 'gauges.jsonl'));
  assert.deepEqual([...new Set(scrapes.map((s) => s.target))].sort(), ['decode', 'prefill', 'router']);
  assert.ok(scrapes.every((s) => s.kind === 'scrape' && s.ok && !s.burst && s.url.endsWith('/metrics')));
  for (const target of ['router', 'prefill', 'decode']) {
    const mine = scrapes.filter((s) => s.target === target);
    assert.ok(mine.length >= 5, `${mine.length} scrapes of ${target}`);
    const gaps = mine.slice(1).map((s, i) => s.run_ms - mine[i]!.run_ms);
    t.diagnostic(`${target}: ${mine.length} scrapes, gaps ${gaps.join(' ')} ms`);
    assert.ok(median(gaps) >= Math.min(170, 200 - margin) && median(gaps) <= Math.max(260, 200 + margin), `${target} median gap ${median(gaps)} ms`);
    // Ticks are drift-free: a late scrape shortens the next gap (three targets make late ones likelier).
    assert.ok(
      gaps.every((g) => g >= Math.min(50, 200 - margin) && g <= Math.max(700, 200 + margin)),
      `every gap near 200 ms: ${gaps.join(' ')}`,
    );
  }
  const names = (target: string): Set<string> => new Set(scrapes.filter((s) => s.target === target).flatMap((s) => s.samples.map((x) => x.name)));
  for (const n of [
    'sglang:num_running_reqs',
    'sglang:num_queue_reqs',
    'sglang:num_prefill_bootstrap_queue_reqs',
    'sglang:num_prefill_inflight_queue_reqs',
    'sglang:generation_tokens_total',
    'sglang:num_requests_total',
  ])
    assert.ok(names('prefill').has(n), `prefill ${n}`);
  for (const n of ['sglang:num_running_reqs', 'sglang:num_decode_prealloc_queue_reqs', 'sglang:num_decode_transfer_queue_reqs', 'sglang:generation_tokens_total'])
    assert.ok(names('decode').has(n), `decode ${n}`);
  for (const n of ['sgl_router_running_requests']) assert.ok(names('router').has(n), `router ${n}`);
  const decodeRunning = scrapes.find((s) => s.target === 'decode')!.samples.find((s) => s.name === 'sglang:num_running_reqs');
  assert.deepEqual(decodeRunning?.labels, { engine_type: 'decode', model_name: 'deepseek-v4-flash', moe_ep_rank: '0', pp_rank: '0', tp_rank: '0' });
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  // One verdict per gauge series (counters are evidence, not judged): 8 on prefill, 8 on decode, 2 on the router.
  assert.deepEqual(
    summary.gauges.map((g) => g.target).reduce<Record<string, number>>((n, tg) => ({ ...n, [tg]: (n[tg] ?? 0) + 1 }), {}),
    { decode: 8, prefill: 8, router: 2 },
  );
  const running = summary.gauges.find((g) => g.target === 'decode' && g.name === 'sglang:num_running_reqs')!;
  assert.equal(running.verdict, 'rotating', running.evidence.join('\n'));
  assert.ok(running.dips > 0);
  assert.equal(running.flow?.counter, 'generation_tokens_total');
  assert.ok((running.flow?.completions ?? 0) > 0);
  assert.equal(summary.gauges.find((g) => g.target === 'prefill' && g.name === 'sglang:num_prefill_bootstrap_queue_reqs')?.verdict, 'idle');
  assert.deepEqual(summary.scrape_targets?.map((s) => [s.target, s.failed]).sort(), [
    ['decode', 0],
    ['prefill', 0],
    ['router', 0],
  ]);
  for (const target of summary.scrape_targets ?? []) assert.ok(Math.abs((target.interval_ms_p50 ?? 0) - 200) <= Math.max(40, margin), JSON.stringify(target));
});

test('`--set monitor.interval_ms=…` works from the command line; a down target is recorded, retried, and the run exits 0', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'w.yaml');
  // Port 9 (discard) on loopback: nothing listens, every scrape is refused.
  writeFileSync(file, `${BASE}monitor:\n  targets: [{name: decode, url: "http://127.0.0.1:9"}]\n`);
  const out = join(dir, 'run');
  const res = await runCli(['run', file, '--out', out, '--set', 'monitor.interval_ms=150']);
  assert.equal(res.code, 0, res.stderr);
  const scrapes = readJsonl<ScrapeEvent>(join(out, 'gauges.jsonl'));
  assert.ok(scrapes.length >= 4, `${scrapes.length} scrapes`);
  assert.ok(scrapes.every((s) => s.target === 'decode' && !s.ok && s.samples.length === 0 && typeof s.duration_ms === 'number'));
  assert.match(scrapes[0]!.error ?? '', /ECONNREFUSED/);
  assert.ok(median(scrapes.slice(1).map((s, i) => s.run_ms - scrapes[i]!.run_ms)) < 260, 'retried at the interval');
  assert.equal((JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { totals: { ok: number } }).totals.ok, 18);
  assert.match(res.stdout, /^gauges {5}decode: \d+ scrapes, every 1\d\d ms, \d+ failed \(last: ECONNREFUSED/m);
});

test('monitor.enabled false scrapes nothing and judges nothing', async (t) => {
  const out = join(tempDir(t), 'run');
  const result = await executeRun({ workload: parseWorkload(`${BASE}monitor: {enabled: false}\n`, 'off.yaml', { agents: 1, rounds: 2 }), out });
  assert.equal(result.status, 'completed');
  assert.equal(readJsonl(join(out, 'gauges.jsonl')).length, 0);
  assert.deepEqual(result.summary.gauges, []);
  assert.deepEqual(result.summary.scrape_targets, []);
});

// Whole runs on the embedded PD deployment: `npm start`'s smoke workload scraping router, prefill and decode with
// the servers' logs in the results folder; each PD fault where it happens, made to fire the watchdog or the
// monitor (a pinned transfer beside healthy ones, the wedge, a stalled bootstrap, a stalled decode the router
// takes out of rotation, the router's 429s); and uvicorn's idle close seen as reconnects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun, type RunResult } from '../../src/run/index.js';
import type { GaugeSnapshot, HangEvent, ProbeEvent, RequestRecord, RunEvent, ScrapeEvent } from '../../src/types/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import type { TestContext } from 'node:test';

interface Ran {
  out: string;
  result: RunResult;
  records: RequestRecord[];
  events: RunEvent[];
  scrapes: ScrapeEvent[];
}

async function run(t: TestContext, yaml: string): Promise<Ran> {
  const out = join(tempDir(t), 'run');
  const result = await executeRun({ workload: parseWorkload(yaml, 'pd.yaml'), out });
  return {
    out,
    result,
    records: readJsonl<RequestRecord>(join(out, 'requests.jsonl')),
    events: readJsonl<RunEvent>(join(out, 'events.jsonl')),
    scrapes: readJsonl<ScrapeEvent>(join(out, 'gauges.jsonl')),
  };
}

const hangsOf = (events: RunEvent[]): HangEvent[] => events.filter((e): e is HangEvent => e.kind === 'hang');
const gaugeIn = (snaps: readonly GaugeSnapshot[] | undefined, target: string, name: string): number | undefined => snaps?.find((g) => g.target === target)?.samples.find((s) => s.name === name)?.value;
const show = (rs: RequestRecord[]): string => JSON.stringify(rs.map((r) => [r.agent, r.round, r.status, r.error?.class ?? r.hang?.phase ?? '']));

const FAST = 'decode_step_ms: 3, decode_step_ms_per_running: 0, output_tokens_min: 8, output_tokens_max: 16';

test("`npm start`'s smoke workload runs on the PD deployment: router, prefill and decode scraped, their logs in the results folder, the cache reported", async (t) => {
  const out = join(tempDir(t), 'run');
  const res = await runCli(['run', 'workloads/smoke.yaml', '--out', out], { timeoutMs: 60_000 });
  assert.equal(res.code, 0, res.stderr);
  assert.match(
    res.stderr,
    /embedded PD deployment: router http:\/\/127\.0\.0\.1:\d+ \(metrics http:\/\/127\.0\.0\.1:\d+\/metrics\) → prefill http:\/\/127\.0\.0\.1:\d+ → decode http:\/\/127\.0\.0\.1:\d+; logs in .*engine/,
  );
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { embedded_engine: { topology: string; servers: { name: string; log: string }[] } };
  assert.equal(manifest.embedded_engine.topology, 'pd');
  assert.deepEqual(
    manifest.embedded_engine.servers.map((s) => s.name),
    ['router', 'prefill', 'decode'],
  );
  for (const s of manifest.embedded_engine.servers) {
    assert.equal(s.log, join(out, 'engine', `${s.name}.log`));
    assert.ok(readFileSync(s.log, 'utf8').length > 0, `${s.name}.log written`);
  }
  assert.match(readFileSync(join(out, 'engine', 'prefill.log'), 'utf8'), /TP0\] Prefill batch, #new-seq: /);
  const scrapes = readJsonl<ScrapeEvent>(join(out, 'gauges.jsonl'));
  assert.deepEqual([...new Set(scrapes.map((s) => s.target))].sort(), ['decode', 'prefill', 'router']);
  const names = new Set(scrapes.flatMap((s) => s.samples.map((x) => `${s.target} ${x.name}`)));
  for (const n of [
    'prefill sglang:num_prefill_bootstrap_queue_reqs',
    'prefill sglang:num_prefill_inflight_queue_reqs',
    'decode sglang:num_decode_prealloc_queue_reqs',
    'decode sglang:num_decode_transfer_queue_reqs',
    'router sgl_router_running_requests',
  ])
    assert.ok(names.has(n), n);
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(records.length, 32);
  assert.ok(
    records.filter((r) => r.round > 1).every((r) => (r.cached_tokens ?? 0) > 0),
    'enable_cache_report: later rounds report cached tokens',
  );
  assert.ok(
    records.some((r) => r.reasoning_chars > 0),
    'deepseek-v4-flash reasons',
  );
  assert.match(res.stdout, /router/);
});

test("inflight_pin on one request: it hangs at its first token with the prefill inflight gauge at 1 in its hang record, while every other request completes and the prefill's counters move", async (t) => {
  const { records, events, result } = await run(
    t,
    `
agents: {count: 3, rounds: 4, think_time_ms: 50}
conversation: {max_tokens: 96}
watchdog: {headers_ms: 2000, first_token_ms: 2000, total_ms: 20000}
engine: {${FAST}, stats_interval_steps: 0, faults: [{kind: inflight_pin, from_round: 2, times: 1}]}
monitor: {interval_ms: 100, pin_after_s: 1}
`,
  );
  const hung = records.filter((r) => r.status === 'hang');
  assert.equal(hung.length, 1, show(records));
  assert.equal(hung[0]!.hang?.phase, 'first_token');
  assert.equal(records.filter((r) => r.status === 'ok').length, 11, show(records));
  const hang = hangsOf(events)[0]!;
  assert.equal(gaugeIn(hang.gauges, 'prefill', 'sglang:num_prefill_inflight_queue_reqs'), 1, JSON.stringify(hang.gauges));
  assert.equal(gaugeIn(hang.gauges, 'decode', 'sglang:num_decode_transfer_queue_reqs'), 1);
  const inflight = result.summary.gauges.find((g) => g.target === 'prefill' && g.name === 'sglang:num_prefill_inflight_queue_reqs')!;
  t.diagnostic(`${inflight.verdict}: ${inflight.evidence.join(' | ')}`);
  // The last scrape may also catch another request passing through the queue (seen once under load: 2).
  assert.ok((inflight.last_value ?? 0) >= 1, `still there at the end: the pin outlived its client (last value ${inflight.last_value})`);
  assert.notEqual(inflight.verdict, 'idle');
  assert.ok((inflight.flow?.counter_moved_intervals ?? 0) > 0 && (inflight.flow?.completions ?? 0) > 0, 'beside flowing counters and completions');
});

test("with prefill.inflight_timeout_s the pinned request ends in SGLang's error event, and a probe greps the WARNING line from the prefill log", async (t) => {
  const { records, events } = await run(
    t,
    `
agents: {count: 2, rounds: 3, think_time_ms: 50}
conversation: {max_tokens: 96}
watchdog: {first_token_ms: 5000}
engine: {${FAST}, faults: [{kind: inflight_pin, from_round: 2, times: 1}], prefill: {inflight_timeout_s: 0.8}}
monitor:
  interval_ms: 200
  probes: [{name: prefill-log, command: 'grep -h "WARNING" "$ROUNDLOAD_RUN_DIR/engine/prefill.log"', on: [end]}]
`,
  );
  const failed = records.filter((r) => r.status === 'error');
  assert.equal(failed.length, 1, show(records));
  assert.equal(failed[0]!.error?.class, 'server_error_event');
  assert.match(failed[0]!.error?.message ?? '', /KVTransferError\(bootstrap_room=\d+\): Request \d+ timed out after 0\.8s in KVPoll\.Transferring/);
  const probe = events.find((e): e is ProbeEvent => e.kind === 'probe' && e.name === 'prefill-log')!;
  assert.equal(probe.exit_code, 0);
  assert.match(probe.stdout, /TP0\] WARNING: Prefill inflight request timed out: req\.rid='rl-[^']+' .* \(SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT=0\.8\)/);
  // The prefill names the request by the id the client sent through the router (the body's rid).
  assert.ok(probe.stdout.includes(`req.rid='${failed[0]!.request_id}'`), probe.stdout);
});

test('kv_wedge: the requests after it hang, and the prefill inflight gauge is judged pinned (unchanged, nothing flowing)', async (t) => {
  const { records, result } = await run(
    t,
    `
agents: {count: 2, rounds: 2, think_time_ms: 20}
conversation: {max_tokens: 64}
watchdog: {headers_ms: 1000, first_token_ms: 1000, total_ms: 4000, on_hang: wait}
engine: {${FAST}, faults: [{kind: kv_wedge, from_round: 2}]}
monitor: {interval_ms: 100, pin_after_s: 1}
`,
  );
  assert.deepEqual(records.map((r) => [r.round, r.status]).sort(), [
    [1, 'ok'],
    [1, 'ok'],
    [2, 'hang'],
    [2, 'hang'],
  ]);
  const inflight = result.summary.gauges.find((g) => g.target === 'prefill' && g.name === 'sglang:num_prefill_inflight_queue_reqs')!;
  t.diagnostic(`${inflight.verdict}: ${inflight.evidence.join(' | ')}`);
  assert.equal(inflight.verdict, 'pinned');
  // Published when a prefill batch forms (SGLang's stats log): the second wedged request is counted only by a
  // later batch, and none comes.
  assert.ok(inflight.last_value >= 1);
});

test('bootstrap_stall: the request waits in the bootstrap queue and hangs at its first token; its hang record shows the prefill bootstrap and decode prealloc queues', async (t) => {
  const { records, events } = await run(
    t,
    `
agents: {count: 2, rounds: 3, think_time_ms: 50}
conversation: {max_tokens: 64}
watchdog: {first_token_ms: 1500}
engine: {${FAST}, stats_interval_steps: 0, faults: [{kind: bootstrap_stall, from_round: 2, times: 1}]}
monitor: {interval_ms: 100}
`,
  );
  assert.equal(records.filter((r) => r.status === 'hang').length, 1, show(records));
  const hang = hangsOf(events)[0]!;
  assert.equal(gaugeIn(hang.gauges, 'prefill', 'sglang:num_prefill_bootstrap_queue_reqs'), 1, JSON.stringify(hang.gauges));
  assert.equal(gaugeIn(hang.gauges, 'decode', 'sglang:num_decode_prealloc_queue_reqs'), 1);
});

test("decode_stall: streams go silent mid-stream (the watchdog's mid_stream hangs), the router takes the decode out of rotation and later requests get 503", async (t) => {
  const { records, out } = await run(
    t,
    `
agents: {count: 2, rounds: 6, think_time_ms: 200}
conversation: {max_tokens: 64}
watchdog: {first_token_ms: 1500, stall_ms: 700}
engine:
  seed: 6 # agent 0's first answer is a 6-token tool call, so its round 2 stalls the decode while agent 1 is still streaming its 40 tokens
  decode_step_ms: 10
  decode_step_ms_per_running: 0
  output_tokens_min: 40
  output_tokens_max: 40
  reasoning: off
  health_timeout_s: 0.4
  faults: [{kind: decode_stall, from_round: 2, times: 1}]
  router: {health_check_interval_s: 0.2, health_check_timeout_s: 2, health_failure_threshold: 1}
monitor: {interval_ms: 200}
`,
  );
  assert.ok(
    records.some((r) => r.status === 'hang' && r.hang?.phase === 'mid_stream'),
    show(records),
  );
  assert.ok(
    records.some((r) => r.status === 'error' && r.http_status === 503 && r.error?.class === 'http_5xx'),
    show(records),
  );
  assert.match(
    readFileSync(join(out, 'engine', 'router.log'), 'utf8'),
    /WARN sgl_router::core::health_checker: Worker http:\/\/127\.0\.0\.1:\d+ marked unhealthy after 1 consecutive failed health checks/,
  );
});

test("the router with --queue-size 0 answers bursts past max_concurrent_requests with 429s: recorded http_429, counted in the router's scraped series", async (t) => {
  const { records, scrapes, out } = await run(
    t,
    `
agents: {count: 6, rounds: 2, think_time_ms: 0}
conversation: {max_tokens: 32}
engine: {${FAST}, reasoning: off, router: {max_concurrent_requests: 2, queue_size: 0}}
monitor: {interval_ms: 100}
thresholds: {error_rate: null}
`,
  );
  const limited = records.filter((r) => r.error?.class === 'http_429');
  assert.ok(limited.length >= 4, show(records));
  const errors = scrapes
    .filter((s) => s.target === 'router')
    .flatMap((s) => s.samples)
    .filter((s) => s.name === 'sgl_router_request_errors_total' && s.labels['error_type'] === 'rate_limited');
  assert.ok(Math.max(...errors.map((s) => s.value)) >= limited.length, 'the monitor saw the router count them');
  assert.match(readFileSync(join(out, 'engine', 'router.log'), 'utf8'), / WARN sgl_router::middleware: No tokens available and queuing is disabled, returning 429/);
});

test("uvicorn's idle close: with think time past keep_alive_s every round goes out on a fresh connection, recorded as reconnects", async (t) => {
  const { records } = await run(
    t,
    `
agents: {count: 2, rounds: 3, think_time_ms: 700}
conversation: {max_tokens: 32}
engine: {${FAST}, reasoning: off, keep_alive_s: 0.4}
monitor: {enabled: false, canary_interval_s: 0}
`,
  );
  assert.equal(records.length, 6);
  assert.ok(
    records.every((r) => r.status === 'ok'),
    show(records),
  );
  assert.deepEqual(
    records.map((r) => r.connection?.nth),
    [1, 1, 1, 1, 1, 1],
    'the router closed each idle socket: no reuse',
  );
  assert.equal(new Set(records.map((r) => r.connection?.id)).size, 6);
});

// Tracing end to end on the embedded engine: with OTEL_EXPORTER_OTLP_ENDPOINT (or tracing.otlp) pointing at a
// test receiver, every request of the run has a span whose trace id is its record's trace_id, the
// conversation and run spans come too, and the hung request's span is ERROR with its phase, its trace id in
// summary.json and report.html.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { rebuildSummary } from '../../src/results/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import { otlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { spawnEngine } from '../helpers/procs.js';

const WORKLOAD = {
  name: 'tracing',
  agents: { count: 2, rounds: 3, think_time_ms: 0 },
  conversation: { system_prompt_tokens: 40, first_user_tokens: 20, user_turn_tokens: 10, tool_result_tokens: 20, max_tokens: 24 },
  watchdog: { connect_ms: 2000, headers_ms: 1500, first_token_ms: 1500, stall_ms: 800, total_ms: 3000 },
  monitor: { canary_interval_s: 0 },
  engine: {
    decode_step_ms: 2,
    decode_step_ms_per_running: 0,
    prefill_ms_per_1k_tokens: 1,
    output_tokens_min: 10,
    output_tokens_max: 14,
    reasoning: 'off',
    faults: [{ kind: 'stall_mid_stream', after_chunks: 3, from_round: 3, times: 1 }],
  },
  tracing: { trace_url: 'https://tempo.example/trace/{trace_id}', otlp: { interval_s: 0.1 } },
};

/** What every traced run must show: a span per record with its ids, the hang ERROR, summary and report naming it. */
function checkRun(out: string, spans: ReceivedSpan[]): { records: RequestRecord[]; hung: RequestRecord } {
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const ours = spans.filter((s) => s.service === 'roundload');
  for (const r of records) {
    const span = ours.find((s) => s.traceId === r.trace_id && s.spanId === r.span_id);
    assert.ok(span !== undefined, `a span for ${r.request_id} (${r.trace_id})`);
    assert.equal(span.kind, 3, 'CLIENT');
    assert.equal(span.attributes['roundload.request_id'], r.request_id);
    assert.equal(span.attributes['roundload.conversation'], r.conversation);
    assert.equal(span.attributes['roundload.round'], r.round);
    assert.equal(span.links.length, 1, 'linked to its conversation');
    if (r.status === 'ok')
      assert.deepEqual(
        span.events.map((e) => e.name),
        ['headers', 'first_token', 'first_content', 'last_token'],
      );
  }
  const hung = records.find((r) => r.status === 'hang');
  assert.ok(hung !== undefined, JSON.stringify(records.map((r) => r.status)));
  const hungSpan = ours.find((s) => s.traceId === hung.trace_id)!;
  assert.equal(hungSpan.status.code, 2, 'ERROR');
  assert.match(hungSpan.status.message, /^hang at mid_stream: stall_ms 800 ms passed/);
  const conversations = ours.filter((s) => s.name.startsWith('conversation '));
  assert.equal(conversations.length, 2);
  const run = ours.find((s) => s.name === 'run tracing');
  assert.ok(run !== undefined);
  for (const c of conversations) assert.equal(c.parentSpanId, run.spanId);
  // The engine's servers join the requests' traces: the router's span a child of the request's, the prefill's and
  // the decode's children of the router's, each stage a child of its server's span.
  const ok = records.filter((r) => r.status === 'ok');
  const joined = ok.filter((r) => {
    const router = spans.find((s) => s.service === 'engine-router' && s.traceId === r.trace_id && s.parentSpanId === r.span_id);
    if (router === undefined) return false;
    const workers = spans.filter((s) => s.traceId === r.trace_id && s.parentSpanId === router.spanId && s.kind === 2).map((s) => s.service);
    const decode = spans.find((s) => s.service === 'engine-decode' && s.traceId === r.trace_id && s.kind === 2);
    const stages = spans.filter((s) => s.parentSpanId === decode?.spanId).map((s) => s.name);
    return workers.includes('engine-prefill') && workers.includes('engine-decode') && stages.join(',') === 'decode_waiting,decode_forward';
  });
  assert.ok(joined.length >= 0.9 * ok.length, `${joined.length} of ${ok.length} ok requests have the engine's spans under theirs`);
  const prefillStages = spans.filter((s) => s.service === 'engine-prefill' && s.kind === 1).map((s) => s.name);
  for (const name of ['prefill_bootstrap', 'prefill_forward', 'prefill_transfer_kv_cache']) assert.ok(prefillStages.includes(name), `prefill stage ${name}: ${[...new Set(prefillStages)].join(', ')}`);
  assert.ok(summary.tracing?.engine !== undefined && summary.tracing.engine.exported === summary.tracing.engine.spans && summary.tracing.engine.spans > 0, JSON.stringify(summary.tracing));
  assert.deepEqual(summary.hangs.trace_ids, [hung.trace_id]);
  // The diagnosis reads the engine's own trace of the hung request: where it ends, beside the gauge evidence.
  const fact = summary.diagnosis.evidence.find((e) => e.includes(`(trace ${hung.trace_id}): the engine's trace ends`));
  assert.ok(fact !== undefined, summary.diagnosis.evidence.join('\n'));
  assert.match(fact, /\(engine-\w+/);
  assert.equal(summary.tracing?.exported, summary.tracing?.spans);
  assert.equal(summary.tracing?.dropped, 0);
  assert.equal(summary.tracing?.run_trace_id, run.traceId);
  const report = readFileSync(join(out, 'report.html'), 'utf8');
  assert.ok(report.includes(`<a href="https://tempo.example/trace/${hung.trace_id}"`), 'report.html links the hung request to its trace');
  return { records, hung };
}

test('tracing.otlp (http/json): every request has its span, the hung one ERROR, its trace id in summary.json and report.html', async (t) => {
  const receiver = await otlpReceiver(t);
  const out = join(tempDir(t), 'run');
  const workload = { ...WORKLOAD, tracing: { ...WORKLOAD.tracing, otlp: { ...WORKLOAD.tracing.otlp, traces_endpoint: `${receiver.url}/v1/traces`, protocol: 'http/json' } } };
  await executeRun({ workload: parseWorkload(JSON.stringify(workload), 'tracing.yaml'), out, preflight: false });
  assert.ok(receiver.requests.every((r) => r.contentType === 'application/json'));
  const { hung } = checkRun(out, receiver.spans);
  // Rebuilt from the folder (`roundload report`), the summary still names where the engine's trace ends.
  const { summary } = await rebuildSummary(out);
  assert.deepEqual(
    summary.tracing?.engine_trace_ends?.map((e) => e.trace_id),
    [hung.trace_id],
  );
  assert.ok(
    summary.diagnosis.evidence.some((e) => e.includes(`(trace ${hung.trace_id}): the engine's trace ends`)),
    summary.diagnosis.evidence.join('\n'),
  );
});

test('OTEL_EXPORTER_OTLP_ENDPOINT (http/protobuf, the default) on the built CLI: the same, with OTEL_SERVICE_NAME and the headers', async (t) => {
  const receiver = await otlpReceiver(t);
  const dir = tempDir(t);
  const file = join(dir, 'tracing.json');
  writeFileSync(file, JSON.stringify(WORKLOAD));
  const out = join(dir, 'run');
  const result = await runCli(['run', file, '--out', out, '--no-preflight', '--quiet'], {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cret', OTEL_SERVICE_NAME: 'agents-under-test' },
    timeoutMs: 60_000,
  });
  assert.equal(result.code, 1, result.stderr);
  assert.ok(receiver.requests.length > 0 && receiver.requests.every((r) => r.contentType === 'application/x-protobuf' && r.headers.authorization === 'Bearer s3cret'));
  const spans = receiver.spans.map((s) => (s.service === 'agents-under-test' ? { ...s, service: 'roundload' } : s));
  checkRun(out, spans);
  assert.ok(!result.stderr.includes('s3cret'), 'the header value is never printed');
  assert.ok(!readFileSync(join(out, 'summary.json'), 'utf8').includes('s3cret'));
});

test('roundload engine --enable-trace --otlp-traces-endpoint host:port: a request stuck in the KV transfer is exported at the stop with that stage open, under the caller traceparent', async (t) => {
  const receiver = await otlpReceiver(t);
  const engine = await spawnEngine(t, { prefill_ms_per_1k_tokens: 1, faults: [{ kind: 'inflight_pin' }] }, ['--enable-trace', '--otlp-traces-endpoint', receiver.url.replace('http://', '')]);
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const controller = new AbortController();
  const body = JSON.stringify({ model: 'deepseek-v4-flash', stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
  const sent = fetch(`${engine.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    body,
    signal: controller.signal,
  })
    .then((r) => r.text())
    .catch(() => 'aborted');
  // The request never completes (its KV transfer is pinned): give up on it, then stop the engine.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  controller.abort();
  await sent;
  await engine.stop();
  const ours = receiver.spans.filter((s) => s.traceId === traceId);
  const router = ours.find((s) => s.service === 'engine-router');
  assert.ok(router !== undefined, JSON.stringify(receiver.spans.map((s) => [s.service, s.name])));
  assert.equal(router.parentSpanId, '00f067aa0ba902b7');
  const prefill = ours.find((s) => s.service === 'engine-prefill' && s.kind === 2);
  assert.equal(prefill?.parentSpanId, router.spanId);
  assert.equal(prefill?.status.code, 2);
  assert.match(prefill?.status.message ?? '', /still open when the engine stopped, in prefill_transfer_kv_cache/);
  const open = ours.find((s) => s.name === 'prefill_transfer_kv_cache');
  assert.equal(open?.attributes['engine.stage.open'], true);
});

// The PD deployment as a whole: three servers on their own ports, a request through router → prefill → decode
// with every queue a real queue behind its gauge, series named and labelled as SGLang and sgl-router write them
// (checked against the reference sample), KV transfer time growing with the prompt, each server's log in its
// real format, the router's flow control (429, 408) and its health view.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { engineSchema } from '../../src/config/index.js';
import { kvTransferMs } from '../../src/engine/kv.js';
import { parseExposition } from '../../src/monitor/index.js';
import { tempDir } from '../helpers/tmp.js';
import { engine, getText, metricsOf, sample, server, streamChat, until, USER } from './helpers.js';
import { ROOT } from '../helpers/root.js';

const FAST = { decode_step_ms: 0, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, kv_transfer_gbps: null, reasoning: 'off' as const };
const REFERENCE = readFileSync(join(ROOT, 'test/engine/fixtures/sglang-decode-metrics.txt'), 'utf8');

/** Families of an exposition: type and the label keys of their samples (without `le`). */
function shapes(text: string): Map<string, { type: string; labels: Set<string> }> {
  const exp = parseExposition(text);
  const out = new Map<string, { type: string; labels: Set<string> }>();
  for (const s of exp.samples) {
    const entry = out.get(s.family) ?? { type: s.type, labels: new Set<string>() };
    for (const k of Object.keys(s.labels)) if (k !== 'le') entry.labels.add(k);
    out.set(s.family, entry);
  }
  return out;
}

describe('the PD deployment', () => {
  it('runs three servers on their own loopback ports, the router with its own metrics port, and says which to scrape', async (t) => {
    const e = await engine(FAST, t);
    assert.equal(e.topology, 'pd');
    assert.deepEqual(
      e.servers.map((s) => s.name),
      ['router', 'prefill', 'decode'],
    );
    const ports = new Set(e.servers.flatMap((s) => [new URL(s.url).port, new URL(s.metricsUrl).port]));
    assert.equal(ports.size, 4, 'router API, router metrics, prefill, decode');
    assert.equal(server(e, 'router').url, e.url, 'the router is the entry');
    assert.deepEqual(
      e.monitorTargets,
      e.servers.map((s) => ({ name: s.name, url: s.metricsUrl })),
    );
    for (const s of e.servers) assert.match(new URL(s.url).hostname, /^127\.0\.0\.1$/);
    const single = await engine({ ...FAST, topology: 'single' }, t);
    assert.deepEqual(single.monitorTargets, [{ name: 'engine', url: `${single.url}/metrics` }]);
  });

  it('a request flows router → prefill → decode: counters move on both servers, the router counts it per worker', async (t) => {
    const e = await engine({ ...FAST, stats_interval_steps: 0 }, t);
    const r = await streamChat(e.url, { messages: [USER('through the deployment')] });
    assert.equal(r.finishReason, 'stop');
    const prefill = await metricsOf(e, 'prefill');
    const decode = await metricsOf(e, 'decode');
    for (const text of [prefill, decode]) {
      assert.equal(sample(text, 'sglang:num_requests_total'), 1);
      assert.equal(sample(text, 'sglang:time_to_first_token_seconds_count'), 1);
      assert.equal(sample(text, 'sglang:e2e_request_latency_seconds_count'), 1);
    }
    assert.equal(sample(prefill, 'sglang:generation_tokens_total'), 1, 'prefill computes the first token');
    assert.equal(sample(decode, 'sglang:generation_tokens_total'), r.usage?.completion_tokens);
    assert.equal(sample(decode, 'sglang:inter_token_latency_seconds_count'), (r.usage?.completion_tokens ?? 0) - 1);
    const router = await metricsOf(e, 'router');
    const worker = (name: 'prefill' | 'decode'): Record<string, string> => ({ worker: server(e, name).url });
    assert.equal(sample(router, 'sgl_router_requests_total', { route: '/v1/chat/completions' }), 1);
    assert.equal(sample(router, 'sgl_router_pd_requests_total', { route: '/v1/chat/completions' }), 1);
    assert.equal(sample(router, 'sgl_router_pd_prefill_requests_total', worker('prefill')), 1);
    assert.equal(sample(router, 'sgl_router_pd_decode_requests_total', worker('decode')), 1);
    assert.equal(sample(router, 'sgl_router_worker_health', worker('prefill')), 1);
    await until(() => e.stats().active === 0, 2000, 'the request to leave');
    assert.equal(sample(await metricsOf(e, 'router'), 'sgl_router_running_requests', worker('decode')), 0);
    assert.equal((await getText(e.url, '/metrics')).status, 404, 'the router serves metrics on its own port only');
  });

  it("series and labels are SGLang's: names, types and label keys match the reference sample, labels sorted, engine_type per server", async (t) => {
    const e = await engine(FAST, t);
    await streamChat(e.url, { messages: [USER('fill the histograms')] });
    const reference = shapes(REFERENCE);
    const decode = await metricsOf(e, 'decode');
    const ours = shapes(decode);
    for (const name of [
      'sglang:num_running_reqs',
      'sglang:num_queue_reqs',
      'sglang:token_usage',
      'sglang:gen_throughput',
      'sglang:num_decode_prealloc_queue_reqs',
      'sglang:num_decode_transfer_queue_reqs',
      'sglang:num_requests_total',
      'sglang:prompt_tokens_total',
      'sglang:cached_tokens_total',
      'sglang:time_to_first_token_seconds',
      'sglang:inter_token_latency_seconds',
    ]) {
      assert.ok(ours.has(name), `the decode server exposes ${name}`);
    }
    let compared = 0;
    for (const [name, ref] of reference) {
      const mine = ours.get(name);
      if (mine === undefined) continue;
      compared += 1;
      assert.equal(mine.type, ref.type, `${name} type`);
      // The reference runs DP attention (dp_rank); this deployment runs dp 1, where SGLang writes no dp_rank.
      assert.deepEqual([...mine.labels].sort(), [...ref.labels].filter((k) => k !== 'dp_rank').sort(), `${name} label keys`);
    }
    assert.ok(compared >= 10, `${compared} families compared`);
    for (const line of decode.split('\n').filter((l) => l.includes('{'))) {
      const keys = [...line.slice(line.indexOf('{') + 1, line.indexOf('}')).matchAll(/(\w+)="/g)].map((m) => m[1]!);
      assert.deepEqual(keys, [...keys].sort(), `labels sorted: ${line}`);
    }
    const prefill = await metricsOf(e, 'prefill');
    assert.equal(sample(prefill, 'sglang:num_prefill_inflight_queue_reqs', { engine_type: 'prefill', model_name: 'deepseek-v4-flash', pp_rank: '0', tp_rank: '0' }), 0);
    assert.notEqual(sample(prefill, 'sglang:num_prefill_bootstrap_queue_reqs'), undefined, 'the newest spelling of the bootstrap queue');
    assert.equal(sample(prefill, 'sglang:num_decode_transfer_queue_reqs'), undefined, 'a prefill server shows its own queues');
    assert.match(decode, /^sglang:num_requests_total\{engine_type="decode",model_name="deepseek-v4-flash"\} 1\.0$/m, 'tokenizer series: engine_type and model_name, Python floats');
    assert.match(await metricsOf(e, 'router'), /^sgl_router_requests_total\{route="\/v1\/chat\/completions"\} 1$/m, "the router's Rust exporter writes integers");
  });

  it('every queue is a real queue behind its gauge: prefill bootstrap, decode prealloc and running, then all complete', async (t) => {
    const e = await engine({ ...FAST, decode_step_ms: 10, max_running_requests: 1, stats_interval_steps: 0, output_tokens_min: 20, output_tokens_max: 20 }, t);
    const streams = Array.from({ length: 3 }, (_, i) => streamChat(e.url, { messages: [USER(`queued ${i}`)] }));
    await until(() => e.stats().running === 1 && (e.stats().servers.decode?.prealloc ?? 0) === 2, 3000, 'one running, two waiting for a decode slot');
    const decode = await metricsOf(e, 'decode');
    const prefill = await metricsOf(e, 'prefill');
    assert.equal(sample(decode, 'sglang:num_running_reqs'), 1);
    assert.equal(sample(decode, 'sglang:num_decode_prealloc_queue_reqs'), 2);
    assert.equal(sample(prefill, 'sglang:num_prefill_bootstrap_queue_reqs'), 2, 'their prefill waits for decode to preallocate');
    const done = await Promise.all(streams);
    assert.ok(done.every((r) => r.finishReason === 'stop'));
    assert.equal(e.stats().completed, 3);
  });

  it('KV transfer time grows with the prompt (kv_transfer_gbps) and shows in the prefill inflight queue', async (t) => {
    const settings = engineSchema.parse({ kv_transfer_ms: 3, kv_transfer_gbps: 400 });
    assert.equal(kvTransferMs(settings, 0), 3);
    assert.ok(Math.abs(kvTransferMs(settings, 10_000) - (3 + ((10_000 * 65_536 * 8) / 400e9) * 1000)) < 1e-9, '64 KiB a token over 400 Gbit/s');
    // 2 Gbit/s: a 1000-token prompt transfers in ~260 ms, a 4000-token one in ~1 s.
    const e = await engine({ ...FAST, kv_transfer_gbps: 2, stats_interval_steps: 0, output_tokens_min: 2, output_tokens_max: 2 }, t);
    const ttft = async (chars: number): Promise<number> => {
      const started = performance.now();
      const r = await streamChat(e.url, { messages: [USER('y'.repeat(chars))] }, (n) => n >= 2);
      assert.ok(r.events.length >= 2);
      return performance.now() - started;
    };
    const pending = ttft(16_000);
    await until(() => e.stats().transferring === 1, 2000, 'the transfer');
    assert.equal(sample(await metricsOf(e, 'prefill'), 'sglang:num_prefill_inflight_queue_reqs'), 1);
    const long = await pending;
    const short = await ttft(4_000);
    t.diagnostic(`first token after ${short.toFixed(0)} ms (1000 tokens) and ${long.toFixed(0)} ms (4000 tokens)`);
    assert.ok(long - short > 500, `4000 tokens (${long.toFixed(0)} ms) transfer ~780 ms longer than 1000 (${short.toFixed(0)} ms)`);
  });

  it("each server writes its log in its real format: SGLang's batch lines and uvicorn access lines, the router's tracing lines", async (t) => {
    const dir = tempDir(t);
    const e = await engine({ ...FAST, stats_interval_steps: 5, output_tokens_min: 12, output_tokens_max: 12 }, t, dir);
    await streamChat(e.url, { messages: [USER('log me')] });
    await until(() => e.logLines('decode').some((l) => l.includes('Decode batch')), 2000, 'a decode stats line');
    await e.close();
    const log = (name: 'router' | 'prefill' | 'decode'): string => readFileSync(server(e, name).logFile!, 'utf8');
    const time = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`;
    assert.match(
      log('prefill'),
      new RegExp(
        String.raw`^\[${time} TP0\] Prefill batch, #new-seq: 1, #new-token: \d+, #cached-token: 0, token usage: 0\.00, #running-req: 0, #queue-req: 0, #prealloc-req: 0, #inflight-req: 0, input throughput \(token/s\): [\d.]+, $`,
        'm',
      ),
    );
    assert.match(
      log('decode'),
      new RegExp(
        String.raw`^\[${time} TP0\] Decode batch, #running-req: 1, #token: \d+, token usage: 0\.00, pre-allocated usage: 0\.00, #prealloc-req: 0, #transfer-req: 0, #retracted-req: 0, cuda graph: True, gen throughput \(token/s\): [\d.]+, #queue-req: 0, $`,
        'm',
      ),
    );
    assert.match(log('decode'), new RegExp(String.raw`^\[${time}\] INFO:     127\.0\.0\.1:\d+ - "POST /v1/chat/completions HTTP/1\.1" 200 OK$`, 'm'));
    assert.match(
      log('router'),
      new RegExp(
        String.raw`^${time}  INFO sgl_router::routers::http::pd_router: PD routing decision route=/v1/chat/completions prefill_url=http://127\.0\.0\.1:\d+ decode_url=http://127\.0\.0\.1:\d+$`,
        'm',
      ),
    );
  });

  it('the router with --queue-size 0 answers a burst past max_concurrent_requests with 429, logged as sgl-router logs it', async (t) => {
    const e = await engine({ ...FAST, decode_step_ms: 20, router: { max_concurrent_requests: 2, queue_size: 0 } }, t);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        request(`${e.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [USER(`burst ${i}`)] }) }).then(async (res) => ({
          status: res.statusCode,
          body: await res.body.text(),
        })),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429]);
    assert.ok(
      results.filter((r) => r.status === 429).every((r) => r.body === ''),
      "sgl-router's 429 has no body",
    );
    assert.equal(e.logLines('router').filter((l) => / WARN sgl_router::middleware: No tokens available and queuing is disabled, returning 429$/.test(l)).length, 4);
    assert.equal(sample(await metricsOf(e, 'router'), 'sgl_router_request_errors_total', { error_type: 'rate_limited' }), 4);
    assert.equal(e.stats().routerRefused, 4);
  });

  it('a queued request waits for a token and gets 408 past queue_timeout_s', async (t) => {
    const e = await engine({ ...FAST, decode_step_ms: 5, output_tokens_min: 400, output_tokens_max: 400, router: { max_concurrent_requests: 1, queue_size: 1, queue_timeout_s: 0.2 } }, t);
    // The bucket refills one token a second: the second request of a burst waits in the queue and times out.
    const [a, b] = await Promise.all(
      [0, 1].map((i) => request(`${e.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [USER(`q ${i}`)] }) }).then((res) => res.body.text().then(() => res.statusCode))),
    );
    assert.deepEqual([a, b].sort(), [200, 408]);
    assert.ok(e.logLines('router').some((l) => l.endsWith('Request timed out in queue, returning 408')));
  });

  it("/health on a worker generates a token (200, empty, after SGLang's one-second look); the router's /health reports its workers", async (t) => {
    const e = await engine(FAST, t);
    for (const name of ['prefill', 'decode'] as const) {
      const started = performance.now();
      assert.deepEqual(await getText(server(e, name).url, '/health'), { status: 200, text: '' });
      assert.ok(performance.now() - started >= 900, "SGLang looks at the scheduler's output once a second");
    }
    assert.deepEqual(await getText(e.url, '/health'), { status: 200, text: 'All servers healthy' });
    const generated = await getText(e.url, '/health_generate');
    assert.equal(generated.status, 200);
    assert.match(generated.text, /^Health generate passed on selected pair: prefill=http:\/\/127\.0\.0\.1:\d+, decode=http:\/\/127\.0\.0\.1:\d+$/);
  });
});

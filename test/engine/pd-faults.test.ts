// The faults that happen between prefill and decode, on the wire and in the servers' own evidence (gauges,
// counters, log lines in SGLang's words, the router's health view): a pinned transfer beside healthy ones, the
// wedge, a bootstrap that never completes, a transfer decode gives up on, a stalled decode loop. Runs where the
// watchdog and the monitor fire on them are test/e2e/pd-faults.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { engine, getText, metricsOf, sample, server, streamChat, until, USER } from './helpers.js';

const FAST = {
  decode_step_ms: 1,
  decode_step_ms_per_running: 0,
  prefill_ms_per_1k_tokens: 0,
  kv_transfer_ms: 0,
  kv_transfer_gbps: null,
  reasoning: 'off' as const,
  output_tokens_min: 6,
  output_tokens_max: 6,
  stats_interval_steps: 0,
};

/** Opens a streaming request and returns what it did by `ms` (or by its end), then lets it go. */
async function openStream(url: string, text: string, ms: number): Promise<{ status: number; body: string }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    const res = await request(`${url}/v1/chat/completions`, { method: 'POST', signal: ac.signal, body: JSON.stringify({ stream: true, messages: [USER(text)] }) });
    let body = '';
    try {
      for await (const piece of res.body) body += (piece as Buffer).toString();
    } catch {
      // cut by the abort: what came so far is the answer
    }
    return { status: res.statusCode, body };
  } catch {
    return { status: 0, body: '' };
  } finally {
    clearTimeout(timer);
  }
}

describe('PD faults', () => {
  it('inflight_pin: one request sits in the prefill inflight queue after its client leaves while others complete; inflight_timeout_s force-fails it with a WARNING line', async (t) => {
    const e = await engine({ ...FAST, faults: [{ kind: 'inflight_pin', times: 1 }], prefill: { inflight_timeout_s: 1.5 } }, t);
    const pinned = await openStream(e.url, 'pinned', 300);
    assert.equal(pinned.status, 200);
    assert.doesNotMatch(pinned.body, /"content":"/, 'no token ever came');
    for (let i = 0; i < 3; i += 1) assert.equal((await streamChat(e.url, { messages: [USER(`healthy ${i}`)] })).finishReason, 'stop');
    const prefill = await metricsOf(e, 'prefill');
    assert.equal(sample(prefill, 'sglang:num_prefill_inflight_queue_reqs'), 1, 'pinned beside the healthy ones');
    assert.equal(sample(prefill, 'sglang:num_requests_total'), 3, 'the others flow');
    assert.equal(e.stats().faultsFired.inflight_pin, 1);
    await until(() => e.stats().transferring === 0, 4000, 'the inflight timeout');
    const warning = e.logLines('prefill').find((l) => l.includes('WARNING'));
    assert.match(
      warning ?? '',
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d TP0\] WARNING: Prefill inflight request timed out: req\.rid='[0-9a-f]{32}' req\.bootstrap_room=\d+ has been in KVPoll\.Transferring for 1\.5s; force-failing it \(SGLANG_DSV4_PREFILL_INFLIGHT_TIMEOUT=1\.5\)$/,
    );
    assert.ok(
      e
        .logLines('prefill')
        .some((l) =>
          /Prefill transfer failed for request rank=0 req\.rid='[0-9a-f]{32}' req\.bootstrap_room=\d+ with exception KVTransferError\(bootstrap_room=\d+\): Request \d+ timed out after 1\.5s in KVPoll\.Transferring$/.test(
            l,
          ),
        ),
    );
    assert.equal(sample(await metricsOf(e, 'prefill'), 'sglang:num_transfer_failed_reqs_total'), 1);
  });

  it("inflight_pin with a client still waiting: decode gives up after waiting_timeout_s and the client gets SGLang's error event, then [DONE]", async (t) => {
    const e = await engine({ ...FAST, faults: [{ kind: 'inflight_pin', times: 1 }], decode: { waiting_timeout_s: 0.5 } }, t);
    const r = await streamChat(e.url, { messages: [USER('wait for it')] });
    assert.equal(r.status, 200);
    assert.equal(r.events.at(-1), '[DONE]');
    const error = r.events.at(-2) as { error: { object: string; message: string; type: string; param: null; code: number } };
    assert.deepEqual(Object.keys(error.error), ['object', 'message', 'type', 'param', 'code']);
    assert.equal(error.error.type, 'InternalServerError');
    assert.equal(error.error.code, 500);
    assert.match(
      error.error.message,
      /^Decode transfer failed for request rank=0 req\.rid='[0-9a-f]{32}' req\.bootstrap_room=\d+ with exception KVTransferError\(bootstrap_room=\d+\): Request \d+ timed out after 0\.5s in KVPoll\.WaitingForInput$/,
    );
    assert.ok(
      e
        .logLines('decode')
        .some((l) =>
          l.includes(
            "Some requests fail to receive KV Cache transfer done signal after bootstrapping. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600'",
          ),
        ),
    );
    assert.equal(sample(await metricsOf(e, 'prefill'), 'sglang:num_prefill_inflight_queue_reqs'), 1, 'the prefill side is still stuck');
  });

  it('bootstrap_stall: the request waits in the bootstrap queue, then fails as SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT fails it', async (t) => {
    const e = await engine({ ...FAST, faults: [{ kind: 'bootstrap_stall', times: 1 }], prefill: { bootstrap_timeout_s: 0.6 } }, t);
    const pending = streamChat(e.url, { messages: [USER('never bootstrapped')] });
    await until(() => (e.stats().servers.prefill?.bootstrap ?? 0) === 1, 2000, 'the bootstrap queue');
    assert.equal(sample(await metricsOf(e, 'prefill'), 'sglang:num_prefill_bootstrap_queue_reqs'), 1);
    assert.equal(sample(await metricsOf(e, 'decode'), 'sglang:num_decode_prealloc_queue_reqs'), 1);
    const r = await pending;
    const error = r.events.at(-2) as { error: { message: string } };
    assert.match(
      error.error.message,
      /^Decode bootstrap failed for request rank=0 .* with exception KVTransferError\(bootstrap_room=\d+\): Request \d+ timed out after 0\.6s in KVPoll\.Bootstrapping$/,
    );
    const prefillLog = e.logLines('prefill');
    assert.ok(prefillLog.some((l) => l.endsWith("you can 'export SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=600' (10 minutes) to relax the timeout condition. ")));
    assert.ok(prefillLog.some((l) => /Prefill bootstrap failed for request rank=0 req\.rid='[0-9a-f]{32}' req\.bootstrap_room=\d+ with exception KVTransferError/.test(l)));
    assert.equal(sample(await metricsOf(e, 'prefill'), 'sglang:num_bootstrap_failed_reqs_total'), 1);
    assert.equal((await streamChat(e.url, { messages: [USER('the next one is fine')] })).finishReason, 'stop');
  });

  it("kv_wedge: every later transfer stalls, the prefill's /health fails within its timeout, the router marks it unhealthy and answers 503", async (t) => {
    const e = await engine(
      { ...FAST, faults: [{ kind: 'kv_wedge', from_round: 2 }], health_timeout_s: 0.5, router: { health_check_interval_s: 0.3, health_check_timeout_s: 2, health_failure_threshold: 1 } },
      t,
    );
    assert.equal((await streamChat(e.url, { messages: [USER('before the wedge')] })).finishReason, 'stop');
    const round2 = [0, 1].map((i) =>
      request(`${e.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ stream: true, messages: [USER('a'), { role: 'assistant', content: 'b' }, USER(`wedge ${i}`)] }) }),
    );
    await until(() => e.stats().transferring === 2, 3000, 'two transfers wedged');
    const health = await getText(server(e, 'prefill').url, '/health');
    assert.equal(health.status, 503);
    assert.ok(e.logLines('prefill').some((l) => /Health check failed\. Server couldn't get a response from detokenizer for last 0\.5 seconds\./.test(l)));
    await until(() => e.logLines('router').some((l) => l.includes('marked unhealthy')), 5000, 'the router to mark the prefill unhealthy');
    const refused = await request(`${e.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [USER('after')] }) });
    assert.equal(refused.statusCode, 503);
    assert.equal(await refused.body.text(), 'No available servers: No prefill workers available. Please check if prefill servers are configured and healthy.');
    const router = await metricsOf(e, 'router');
    assert.equal(sample(router, 'sgl_router_worker_health', { worker: server(e, 'prefill').url }), 0);
    assert.equal(sample(router, 'sgl_router_worker_health', { worker: server(e, 'decode').url }), 1);
    assert.equal((await getText(e.url, '/health')).status, 503);
    for (const p of round2) void p.then((res) => res.body.destroy()).catch(() => {});
  });

  it("decode_stall: running streams go silent for duration_s and resume; meanwhile the decode's /health fails and the router sends nothing there", async (t) => {
    // The second request strikes: the first is streaming by then.
    const e = await engine(
      {
        ...FAST,
        decode_step_ms: 5,
        output_tokens_min: 300,
        output_tokens_max: 300,
        faults: [{ kind: 'decode_stall', duration_s: 2, every: 2, times: 1 }],
        health_timeout_s: 0.5,
        router: { health_check_interval_s: 0.2, health_check_timeout_s: 2, health_failure_threshold: 1, health_success_threshold: 1 },
      },
      t,
    );
    const running = streamChat(e.url, { messages: [USER('stall me')] });
    await until(() => e.stats().running === 1, 3000, 'the first stream running');
    await new Promise((r) => setTimeout(r, 100));
    const striking = streamChat(e.url, { messages: [USER('the stall')] });
    await until(() => e.logLines('router').some((l) => l.includes('marked unhealthy')), 5000, 'the router to mark the decode unhealthy');
    assert.ok(e.logLines('router').some((l) => l.includes(`Worker ${server(e, 'decode').url} marked unhealthy`)));
    const refused = await request(`${e.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [USER('during')] }) });
    assert.equal(refused.statusCode, 503);
    assert.match(await refused.body.text(), /No decode workers available/);
    const [a, b] = await Promise.all([running, striking]);
    assert.equal(a.finishReason, 'stop', 'the stream resumed and finished');
    assert.equal(b.finishReason, 'stop');
    const gaps = a.arrivalsMs.slice(1).map((at, i) => at - a.arrivalsMs[i]!);
    assert.ok(Math.max(...gaps) >= 1500, `one long silence mid-stream (${Math.max(...gaps).toFixed(0)} ms)`);
    assert.equal(e.stats().faultsFired.decode_stall, 1);
    await until(() => e.logLines('router').some((l) => l.includes('is healthy again')), 5000, 'the decode back in rotation');
    assert.equal((await streamChat(e.url, { messages: [USER('after')] })).finishReason, 'stop');
  });
});

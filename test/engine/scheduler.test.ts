// The latency model seen from a client: decode steps slow down as the batch grows, requests past
// max_running_requests queue, a client that leaves is dropped at once, and close() ends open streams. PD unless
// a test says `single` (the unified server's own queue picture).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { LoopDelay } from '../helpers/loop-delay.js';
import { engine, getText, metricsOf, sample, streamChat, until, USER, type StreamResult } from './helpers.js';

/** Mean gap between token events of one stream, from its first token to its last. */
function meanGapMs(r: StreamResult): number {
  // Events: role+first token arrive together; the finish/usage/[DONE] ride with the last token.
  const firstToken = r.comments[0]?.beforeEvent ?? 1;
  const times = r.arrivalsMs.slice(firstToken, r.arrivalsMs.length - 3);
  const first = times[0];
  const last = times.at(-1);
  if (first === undefined || last === undefined || times.length < 2) throw new Error('too few tokens to time');
  return (last - first) / (times.length - 1);
}

const gauge = (text: string, name: string): number => sample(text, name) ?? Number.NaN;

describe('engine scheduler', () => {
  it('the inter-token gap grows with the number of running streams (one decode loop for the batch)', async (t) => {
    const settings = { decode_step_ms: 4, decode_step_ms_per_running: 1, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, output_tokens_min: 30, output_tokens_max: 30 };
    const e = await engine(settings, t);
    const loop = new LoopDelay();
    t.after(() => loop.stop());
    // The loop keeps its ideal step times, so a late step only shifts one gap: a mean over 29 gaps is only
    // raised by a stall longer than a step. A stall can only raise it: the least of three lone streams is the model's.
    const lone: number[] = [];
    for (let i = 0; i < 3; i += 1) lone.push(meanGapMs(await streamChat(e.url, { messages: [USER(`alone ${i}`)] })));
    const alone = Math.min(...lone);
    const batch = await Promise.all(Array.from({ length: 16 }, (_, i) => streamChat(e.url, { messages: [USER(`together ${i}`)] })));
    // The streams join the batch one by one (each after its prefill), so a mean over them stays under the full batch's 20 ms.
    const together = batch.map(meanGapMs).reduce((x, y) => x + y, 0) / batch.length;
    const margin = loop.marginMs();
    t.diagnostic(`mean inter-token gap: 1 stream ${lone.map((g) => g.toFixed(2)).join(', ')} ms (model 5), 16 streams ${together.toFixed(2)} ms (model 20); loop delay margin ${margin.toFixed(1)} ms`);
    // A timer never fires early (1 ms for its rounding); late only by how late the loop ran.
    assert.ok(alone >= 4 && alone <= 5 + margin, `1 stream: ${alone.toFixed(2)} ms`);
    assert.ok(together <= 20 + margin, `16 streams: ${together.toFixed(2)} ms`);
    assert.ok(together > 2 * alone, `16 streams (${together.toFixed(2)} ms) at least twice as slow as 1 (${alone.toFixed(2)} ms)`);
  });

  it('decode_speedup divides the step time', async (t) => {
    const base = { decode_step_ms: 20, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, output_tokens_min: 20, output_tokens_max: 20 };
    // A late timer only lengthens gaps: the least of three streams is each setting's own step.
    const least = async (url: string): Promise<number> => {
      const gaps: number[] = [];
      for (let i = 0; i < 3; i += 1) gaps.push(meanGapMs(await streamChat(url, { messages: [USER(`speed ${i}`)] })));
      return Math.min(...gaps);
    };
    const slow = await least((await engine(base, t)).url);
    const fast = await least((await engine({ ...base, decode_speedup: 2 }, t)).url);
    t.diagnostic(`step 20 ms: ${slow.toFixed(2)} ms; with speedup 2: ${fast.toFixed(2)} ms`);
    assert.ok(slow >= 18.5, `the step is never shorter than its model (less one late first token over 19 gaps): ${slow.toFixed(2)} ms`);
    assert.ok(fast >= 9 && fast < slow * 0.75, `${fast.toFixed(2)} < 0.75 × ${slow.toFixed(2)}`);
  });

  it('single: requests past max_running_requests wait in the queue gauge, then all complete', async (t) => {
    const e = await engine(
      { topology: 'single', max_running_requests: 2, decode_step_ms: 10, decode_step_ms_per_running: 0, kv_transfer_ms: 0, output_tokens_min: 15, output_tokens_max: 15, stats_interval_steps: 0 },
      t,
    );
    const streams = Array.from({ length: 5 }, (_, i) => streamChat(e.url, { messages: [USER(`queued ${i}`)] }));
    await until(() => e.stats().running === 2, 10_000, 'two running streams');
    const metrics = (await getText(e.url, '/metrics')).text;
    assert.equal(gauge(metrics, 'sglang:num_running_reqs'), 2);
    assert.ok(gauge(metrics, 'sglang:num_queue_reqs') > 0, 'queue gauge > 0');
    assert.equal(e.stats().queued, 3);
    const done = await Promise.all(streams);
    assert.ok(done.every((r) => r.finishReason === 'stop'));
    assert.equal(e.stats().completed, 5);
    assert.equal(e.stats().queued, 0);
  });

  it('a request queued behind one with the same system prompt finds it cached when admitted', async (t) => {
    const e = await engine({ max_running_requests: 1, decode_step_ms: 1, kv_transfer_ms: 0, output_tokens_min: 3, output_tokens_max: 3, enable_cache_report: true }, t);
    const system = { role: 'system', content: 'shared '.repeat(400) };
    const [a, b] = await Promise.all([streamChat(e.url, { messages: [system, USER('first')] }), streamChat(e.url, { messages: [system, USER('second')] })]);
    const cached = [a, b].map((r) => r.usage?.prompt_tokens_details?.cached_tokens ?? 0).sort((x, y) => x - y);
    assert.equal(cached[0], 0);
    assert.ok((cached[1] ?? 0) >= 700, `the later one has the system prompt cached (${cached[1]})`);
  });

  it("prefill and KV transfer delay the first token; the transfer shows in the prefill server's num_prefill_inflight_queue_reqs", async (t) => {
    const e = await engine(
      {
        prefill_ms_per_1k_tokens: 400,
        kv_transfer_ms: 600,
        kv_transfer_gbps: null,
        decode_step_ms: 1,
        output_tokens_min: 3,
        output_tokens_max: 3,
        stats_interval_steps: 0,
        enable_cache_report: true,
        reasoning: 'off',
      },
      t,
    );
    const started = performance.now();
    // About 1000 uncached tokens: ~400 ms prefill, then a 600 ms transfer: a window the polls and the scrape
    // below do not miss on a loaded machine.
    const pending = streamChat(e.url, { messages: [USER('x'.repeat(4_000))] });
    await until(() => e.stats().transferring === 1, 10_000, 'the KV transfer');
    assert.equal(gauge(await metricsOf(e, 'prefill'), 'sglang:num_prefill_inflight_queue_reqs'), 1);
    const r = await pending;
    const ttftMs = Number((r.comments[0]?.text ?? '').split('=')[1]);
    t.diagnostic(`first token after ${ttftMs.toFixed(1)} ms (model ≈ 400 + 600 + 1)`);
    assert.ok(ttftMs >= 990 && performance.now() - started >= 990, `ttft ${ttftMs}`);
    // Round 2 of the same conversation is mostly cached: its prefill is short.
    const assistant = { role: 'assistant', content: r.content };
    const r2 = await streamChat(e.url, { messages: [USER('x'.repeat(4_000)), assistant, USER('next')] });
    assert.ok((r2.usage?.prompt_tokens_details?.cached_tokens ?? 0) >= 1_000);
    const ttft2 = Number((r2.comments[0]?.text ?? '').split('=')[1]);
    assert.ok(ttft2 < ttftMs - 200, `cached round 2 ttft ${ttft2.toFixed(1)} < round 1 ${ttftMs.toFixed(1)}`);
  });

  it('a client that disconnects mid-stream is dropped from the batch at once', async (t) => {
    // 50 000 tokens at 2 ms: 100 s, so a stream left in the batch would still be there when `until` gives up.
    const e = await engine({ decode_step_ms: 2, decode_step_ms_per_running: 0, kv_transfer_ms: 0, output_tokens_min: 50_000, output_tokens_max: 50_000, stats_interval_steps: 0 }, t);
    const errors: unknown[] = [];
    const onError = (err: unknown): void => void errors.push(err);
    process.on('uncaughtException', onError);
    t.after(() => process.off('uncaughtException', onError));
    const r = await streamChat(e.url, { messages: [USER('abort me')] }, (n) => n >= 5);
    assert.ok(r.events.length >= 5);
    await until(() => e.stats().running === 0 && e.stats().active === 0, 10_000, 'the stream to leave the batch');
    // A step already due when the stream left may still fire, once, with nothing to do (late on a loaded
    // machine); after it, none: a loop still stepping would take 50 steps in the 100 ms below.
    await new Promise((res) => setTimeout(res, 300));
    const steps = e.stats().decodeSteps;
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(e.stats().decodeSteps, steps, 'no decode steps while idle');
    assert.equal(e.stats().aborted, 1);
    assert.ok(e.stats().completionTokens < 50_000);
    assert.equal(gauge(await metricsOf(e, 'decode'), 'sglang:num_running_reqs'), 0);
    assert.deepEqual(errors, []);
  });

  it('close() ends within a second while streams are open, and the clients see their streams cut', async () => {
    const e = await engine({ decode_step_ms: 5, kv_transfer_ms: 0, output_tokens_min: 10_000, output_tokens_max: 10_000 });
    const res = await request(`${e.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ stream: true, messages: [USER('forever')] }) });
    const reading = res.body.text().then(
      () => 'ended',
      () => 'cut',
    );
    await until(() => e.stats().running === 1, 10_000, 'a running stream');
    const loop = new LoopDelay();
    const started = performance.now();
    await e.close();
    const tookMs = performance.now() - started;
    loop.stop();
    assert.ok(tookMs < 1_000 + loop.marginMs(), `close took ${tookMs.toFixed(0)} ms (loop delay margin ${loop.marginMs().toFixed(0)} ms)`);
    assert.equal(await reading, 'cut');
    assert.equal(e.stats().running, 0);
  });
});

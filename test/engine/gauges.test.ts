// The servers' scheduler gauges refresh only when stats are logged (as SGLang's do), so an idle server keeps
// its last values; and the gauge faults: `pin` (stuck at 1, transfers held, no flow) and `rotate`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { engineSchema } from '../../src/config/index.js';
import { PublishedGauges, type GaugeValues } from '../../src/engine/gauges.js';
import { engine, metricsOf, sample, streamChat, until, USER } from './helpers.js';

const metric = (text: string, name: string): number => sample(text, name) ?? Number.NaN;

const live =
  (running: number): (() => GaugeValues) =>
  () => ({ num_running_reqs: running, num_queue_reqs: 0, num_prefill_inflight_queue_reqs: 0, num_used_tokens: 10, token_usage: 0.1, gen_throughput: 5, cache_hit_rate: 0 });

describe('engine gauges', () => {
  it('are published on each prefill batch and every stats_interval_steps decode steps, and held in between', () => {
    let running = 3;
    const g = new PublishedGauges(engineSchema.parse({ stats_interval_steps: 40 }), () => live(running)());
    assert.equal(g.read()['num_running_reqs'], 0, 'nothing logged yet');
    g.onPrefillBatch();
    assert.equal(g.read()['num_running_reqs'], 3);
    running = 5;
    for (let step = 1; step < 40; step += 1) g.onDecodeStep(step);
    assert.equal(g.read()['num_running_reqs'], 3, 'steps 1-39 log nothing');
    g.onDecodeStep(40);
    assert.equal(g.read()['num_running_reqs'], 5);
    running = 0;
    assert.equal(g.read()['num_running_reqs'], 5, 'an idle engine keeps its last values');
    const always = new PublishedGauges(engineSchema.parse({ stats_interval_steps: 0 }), () => live(running)());
    assert.equal(always.read()['num_running_reqs'], 0, 'stats_interval_steps 0: live');
  });

  it('rotate: the gauge is 1 for most of each period and 0 for its last dip_ms; pin: 1 from after_s, transfers held', () => {
    let now = 0;
    const rotate = new PublishedGauges(engineSchema.parse({ gauge_fault: { kind: 'rotate', period_s: 30, dip_ms: 500 } }), live(0), { now: () => now });
    const at = (ms: number): number | undefined => {
      now = ms;
      return rotate.read()['num_prefill_inflight_queue_reqs'];
    };
    assert.deepEqual([0, 18_000, 29_499, 29_500, 29_999, 30_000, 59_600].map(at), [1, 1, 1, 0, 0, 1, 0]);
    assert.equal(rotate.holdTransfers(), false);
    now = 0;
    const pin = new PublishedGauges(engineSchema.parse({ gauge_fault: { kind: 'pin', gauge: 'num_prefill_inflight_queue_reqs', after_s: 2 } }), live(0), { now: () => now });
    assert.deepEqual([pin.read()['num_prefill_inflight_queue_reqs'], pin.holdTransfers()], [0, false]);
    now = 2000;
    assert.deepEqual([pin.read()['num_prefill_inflight_queue_reqs'], pin.holdTransfers()], [1, true]);
  });

  it('a decode server idle after a request still shows the running gauge of its last stats log; counters are live', async (t) => {
    const e = await engine({ decode_step_ms: 1, decode_step_ms_per_running: 0, kv_transfer_ms: 0, output_tokens_min: 100, output_tokens_max: 100, tool_call_ratio: 0, reasoning: 'off' }, t);
    const r = await streamChat(e.url, { messages: [USER('leave a stale gauge')] });
    assert.equal(r.finishReason, 'stop');
    await new Promise((res) => setTimeout(res, 100));
    const text = await metricsOf(e, 'decode');
    assert.equal(e.stats().running, 0);
    assert.equal(metric(text, 'sglang:num_running_reqs'), 1, 'stale: logged at step 40 or 80 while the request ran');
    assert.equal(metric(text, 'sglang:num_requests_total'), 1);
    assert.equal(metric(text, 'sglang:generation_tokens_total'), 100);
  });

  it('pin: requests never get past the KV transfer, the prefill inflight gauge reads 1, and no tokens are generated', async (t) => {
    const e = await engine({ prefill_ms_per_1k_tokens: 0, gauge_fault: { kind: 'pin' } }, t);
    const bodies = [0, 1, 2].map((i) => JSON.stringify({ model: 'deepseek-v4-flash', stream: true, messages: [USER(`stuck ${i}`)] }));
    const ac = new AbortController();
    const pending = bodies.map((body) =>
      request(`${e.url}/v1/chat/completions`, { method: 'POST', body, signal: ac.signal })
        .then((res) => res.body.text())
        .catch(() => 'aborted'),
    );
    await until(() => e.stats().transferring === 3, 2000, 'three requests held in transfer');
    await new Promise((res) => setTimeout(res, 100));
    let text = await metricsOf(e, 'prefill');
    assert.equal(metric(text, 'sglang:num_prefill_inflight_queue_reqs'), 1);
    assert.equal(e.stats().running, 0);
    assert.equal(metric(await metricsOf(e, 'decode'), 'sglang:generation_tokens_total'), 0);
    ac.abort();
    assert.deepEqual(await Promise.all(pending), ['aborted', 'aborted', 'aborted']);
    text = await metricsOf(e, 'prefill');
    assert.equal(metric(text, 'sglang:num_prefill_inflight_queue_reqs'), 1, 'still pinned');
    assert.equal(metric(await metricsOf(e, 'decode'), 'sglang:generation_tokens_total'), 0, 'aborted requests generated nothing');
  });
});

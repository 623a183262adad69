// Gauge verdicts on synthetic series (no servers, no real time): the incident's 18 s vs 85 s, pins, stale
// readings of an idle engine, idle gauges, gaps in observation, and memory over a night of samples.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClientActivity, GaugeStore, gaugeVerdicts, judgeGauges, SeriesSelector } from '../../src/monitor/index.js';
import { DEFAULT_MONITOR_COUNTERS, DEFAULT_MONITOR_GAUGES } from '../../src/config/index.js';
import type { GaugeSample, GaugeVerdict, ScrapeEvent } from '../../src/types/index.js';

const LABELS = { model_name: 'm', engine_type: 'prefill', tp_rank: '0' };
const GAUGE = 'sglang:num_prefill_inflight_queue_reqs';

interface Series {
  intervalMs: number;
  durationS: number;
  gauge: (ms: number) => number;
  /** generation_tokens_total at a time; omitted: the target exposes no flow counter. */
  tokens?: (ms: number) => number;
  /** Times the target is down. */
  down?: (ms: number) => boolean;
  target?: string;
}

function scrapes(s: Series): ScrapeEvent[] {
  const out: ScrapeEvent[] = [];
  for (let ms = 0; ms <= s.durationS * 1000; ms += s.intervalMs) {
    const down = s.down?.(ms) === true;
    const samples: GaugeSample[] = [{ name: GAUGE, labels: LABELS, value: s.gauge(ms), type: 'gauge' }];
    if (s.tokens !== undefined) samples.push({ name: 'sglang:generation_tokens_total', labels: { model_name: 'm' }, value: s.tokens(ms), type: 'counter' });
    out.push({
      kind: 'scrape',
      t: new Date(ms).toISOString(),
      run_ms: ms,
      target: s.target ?? 'prefill',
      url: 'http://prefill/metrics',
      duration_ms: 3,
      ok: !down,
      error: down ? 'connect ECONNREFUSED' : null,
      burst: false,
      samples: down ? [] : samples,
    });
  }
  return out;
}

/** Requests completing one after another, each `everyMs` long, from `fromMs` to `toMs`. */
function steadyRequests(fromMs: number, toMs: number, everyMs: number) {
  const out: { run_ms: number; e2e_ms: number; status: string }[] = [];
  for (let t = fromMs; t + everyMs <= toMs; t += everyMs) out.push({ run_ms: t, e2e_ms: everyMs, status: 'ok' });
  return out;
}

function only(verdicts: GaugeVerdict[]): GaugeVerdict {
  const v = verdicts.filter((x) => x.name === GAUGE);
  assert.equal(v.length, 1, JSON.stringify(verdicts));
  return v[0]!;
}

const PIN = { pinAfterS: 30 };
/** The incident's rotating load: 1 nearly all the time, 0 for 1.5 s every 30 s, requests completing throughout. */
const rotating = (ms: number): number => (ms < 1000 ? 0 : ms % 30_000 >= 28_500 ? 0 : 1);

describe('gauge verdicts', () => {
  it('rotating load with a dip period beyond the first 18 s is insufficient at 18 s and rotating at 85 s', () => {
    const series = (durationS: number) => scrapes({ intervalMs: 1000, durationS, gauge: rotating, tokens: (ms) => Math.floor(ms / 10) });
    const requests = steadyRequests(0, 85_000, 2000);
    const early = only(
      gaugeVerdicts(
        series(18),
        requests.filter((r) => r.run_ms + r.e2e_ms <= 18_000),
        PIN,
      ),
    );
    assert.equal(early.verdict, 'insufficient', early.evidence.join('\n'));
    assert.equal(early.dips, 0);
    assert.equal(early.longest_nonzero_s, 17);
    assert.equal(early.needed_s, 31, 'the first 1 s plus 30 s');
    assert.match(early.evidence[0]!, /unchanged at 1 for 17\.0 s with no dip seen.*about 31 s/);
    const late = only(gaugeVerdicts(series(85), requests, PIN));
    assert.equal(late.verdict, 'rotating', late.evidence.join('\n'));
    assert.equal(late.dips, 2);
    assert.equal(late.needed_s, null);
    assert.match(late.evidence[0]!, /^2 dips over 85\.0 s; non-zero and unchanged 28\.0 s at most$/);
    assert.ok(
      late.evidence.some((e) => /generation_tokens_total moved in 85 of 85 scrape intervals/.test(e)),
      late.evidence.join('\n'),
    );
    assert.ok(
      late.evidence.some((e) => /42 client requests completed in the window/.test(e)),
      late.evidence.join('\n'),
    );
  });

  it('a steady gauge whose dips fall between samples is rotating once it has stayed past pin_after_s with work flowing', () => {
    // Dips of 200 ms at 29.8 s, 59.8 s…: a 1 s sampling never sees them.
    const gauge = (ms: number): number => (ms < 1000 ? 0 : ms % 30_000 >= 29_800 ? 0 : 1);
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 85, gauge, tokens: (ms) => Math.floor(ms / 10) }), steadyRequests(0, 85_000, 2000), PIN));
    assert.equal(v.dips, 0);
    assert.equal(v.verdict, 'rotating', v.evidence.join('\n'));
    assert.match(v.evidence[0]!, /steady at 1 for 84\.0 s while work flowed through it: generation_tokens_total moved, 42 client requests completed/);
  });

  it('a gauge stuck at 1 with no flow while a client waits is pinned once past pin_after_s, and insufficient before', () => {
    const gauge = (ms: number): number => (ms < 2000 ? 0 : 1);
    const tokens = (ms: number): number => Math.min(ms, 2000);
    const hung = [{ run_ms: 2000, e2e_ms: 70_000, status: 'hang' }];
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 62, gauge, tokens }), hung, PIN));
    assert.equal(v.verdict, 'pinned', v.evidence.join('\n'));
    assert.equal(v.longest_nonzero_s, 60);
    assert.match(
      v.evidence[0]!,
      /unchanged at 1 for 60\.0 s \(2\.0 s to 62\.0 s into the run\) with nothing flowing: generation_tokens_total did not move, no client request completed and no token streamed, and client requests were in flight 100% of that time/,
    );
    assert.match(v.evidence[1]!, /still at 1 at the last sample/);
    const early = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 20, gauge, tokens }), hung, PIN));
    assert.equal(early.verdict, 'insufficient');
    assert.equal(early.needed_s, 32);
  });

  it('a pin is found by client evidence alone when the target has no flow counter, and survives its release', () => {
    const gauge = (ms: number): number => (ms >= 5000 && ms < 50_000 ? 1 : 0);
    const requests = [...steadyRequests(0, 5000, 1000), { run_ms: 5000, e2e_ms: 45_500, status: 'hang' }, ...steadyRequests(51_000, 60_000, 1000)];
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 60, gauge }), requests, PIN));
    assert.equal(v.verdict, 'pinned', v.evidence.join('\n'));
    assert.equal(v.dips, 1);
    assert.match(v.evidence[1]!, /moved again at last/);
    assert.ok(v.evidence.some((e) => /no flow counter \(of monitor\.counters\) on prefill: judged by the client's completions and tokens only/.test(e)));
  });

  it('a gauge left at 1 by an idle engine is stale, not pinned: counters flat and nothing in flight', () => {
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 120, gauge: () => 1, tokens: () => 5000 }), [], PIN));
    assert.equal(v.verdict, 'stale', v.evidence.join('\n'));
    assert.match(v.evidence[0]!, /unchanged at 1 for 120 s while no client request was in flight and generation_tokens_total did not move: a stale reading/);
    // Short, too: nothing was asked of the engine, so the value cannot be serving anything.
    const short = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 5, gauge: () => 1, tokens: () => 5000 }), [], PIN));
    assert.equal(short.verdict, 'stale');
  });

  it('after rotating load, the value an idle engine keeps is named as a stale tail of a rotating gauge', () => {
    // Load for 40 s (dips every 10 s), then the engine idles with the gauge left at 1.
    const gauge = (ms: number): number => (ms < 40_000 ? (ms % 10_000 < 2000 ? 0 : 1) : 1);
    const tokens = (ms: number): number => Math.floor(Math.min(ms, 40_000) / 10);
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 100, gauge, tokens }), steadyRequests(0, 40_000, 1000), PIN));
    assert.equal(v.verdict, 'rotating');
    assert.ok(
      v.evidence.some((e) => /^ended at 1, unchanged for 60\.0 s while no client request was in flight/.test(e)),
      v.evidence.join('\n'),
    );
  });

  it('a gauge that only rises in a short window is insufficient, and says it rose', () => {
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 5, gauge: (ms) => ms / 1000, tokens: (ms) => ms }), steadyRequests(0, 5000, 1000), PIN));
    assert.equal(v.verdict, 'insufficient');
    assert.match(v.evidence[0]!, /^rose 5 times and never dropped in 5\.0 s, unchanged 0\.0 s at most \(now 5 for 0\.0 s\)/);
    assert.equal(v.needed_s, 35, 'the last stretch started at 5 s');
  });

  it('a gauge at 0 throughout is idle; one sample is insufficient', () => {
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 500, durationS: 10, gauge: () => 0, tokens: (ms) => ms }), [], PIN));
    assert.equal(v.verdict, 'idle');
    assert.equal(v.samples, 21);
    assert.match(v.evidence[0]!, /0 in all 21 samples over 10\.0 s/);
    const one = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 0, gauge: () => 1 }), [], PIN));
    assert.equal(one.verdict, 'insufficient');
    assert.equal(one.needed_s, 30);
  });

  it('a target down in the middle breaks a steady stretch: two 20 s halves are not a 50 s pin', () => {
    const down = (ms: number): boolean => ms > 20_000 && ms < 30_000;
    const hung = [{ run_ms: 0, e2e_ms: 60_000, status: 'hang' }];
    const v = only(gaugeVerdicts(scrapes({ intervalMs: 1000, durationS: 50, gauge: () => 1, tokens: () => 7, down }), hung, PIN));
    assert.equal(v.verdict, 'insufficient', v.evidence.join('\n'));
    assert.equal(v.longest_nonzero_s, 20);
  });

  it('series are kept per target and label set, judged with their own target’s counters', () => {
    const a = scrapes({ target: 'prefill', intervalMs: 1000, durationS: 40, gauge: () => 1, tokens: () => 1 });
    const b = scrapes({ target: 'decode', intervalMs: 1000, durationS: 40, gauge: () => 1, tokens: (ms) => ms });
    const verdicts = gaugeVerdicts(
      [...a, ...b].sort((x, y) => x.run_ms - y.run_ms),
      [{ run_ms: 0, e2e_ms: 41_000, status: 'hang' }],
      PIN,
    );
    assert.deepEqual(
      verdicts.map((v) => [v.target, v.verdict]),
      [
        ['decode', 'rotating'],
        ['prefill', 'pinned'],
      ],
    );
    assert.deepEqual(verdicts[0]!.labels, LABELS);
  });

  it('an hour at 100 ms keeps a handful of stretches, not every sample', () => {
    const store = new GaugeStore(30_000);
    const client = new ClientActivity();
    let n = 0;
    for (let ms = 0; ms <= 3_600_000; ms += 100) {
      // Busy: the gauge changes every few samples.
      const value = Math.floor(ms / 300) % 4;
      store.add({
        kind: 'scrape',
        t: '',
        run_ms: ms,
        target: 'engine',
        url: '',
        duration_ms: 1,
        ok: true,
        error: null,
        burst: false,
        samples: [
          { name: 'sglang:num_running_reqs', labels: {}, value, type: 'gauge' },
          { name: 'sglang:generation_tokens_total', labels: {}, value: ms, type: 'counter' },
        ],
      });
      n += 1;
    }
    const series = [...store.series.values()][0]!;
    assert.equal(series.samples, n);
    assert.ok(series.stretches.length <= 2, `${series.stretches.length} stretches kept`);
    assert.equal(store.targets.get('engine')!.counters.get('generation_tokens_total')!.moved.length, 2, 'one merged run of movement');
    const [v] = judgeGauges(store, client, PIN);
    assert.equal(v?.verdict, 'rotating');
  });
});

/** One scrape of `target` at `ms` with the given samples (empty and failed when `down`). */
function scrape(target: string, ms: number, samples: GaugeSample[], down = false): ScrapeEvent {
  return {
    kind: 'scrape',
    t: '',
    run_ms: ms,
    target,
    url: `http://${target}/metrics`,
    duration_ms: 2,
    ok: !down,
    error: down ? 'ERR_GET_TIMEOUT: GET got no complete answer within 2000 ms' : null,
    burst: false,
    samples: down ? [] : samples,
  };
}
const g = (name: string, value: number): GaugeSample => ({ name, labels: { model_name: 'm' }, value, type: 'gauge' });
const c = (name: string, value: number): GaugeSample => ({ name, labels: { model_name: 'm' }, value, type: 'counter' });

describe('counter resets', () => {
  it('a counter that goes back is kept as a reset between the last read before and the first after, failed scrapes between them or not', () => {
    const store = new GaugeStore(30_000);
    const values = [10, 20, 30, 5, 15];
    values.forEach((v, i) => store.add(scrape('engine', i * 200, [c('sglang:generation_tokens_total', v)])));
    store.add(scrape('engine', 1000, [], true));
    store.add(scrape('engine', 1200, [c('sglang:generation_tokens_total', 2)]));
    const counter = store.targets.get('engine')!.counters.get('generation_tokens_total')!;
    assert.deepEqual(counter.resets, [400, 600, 800, 1200]);
    assert.equal(counter.increase, 10 + 10 + 5 + 10 + 2, 'a reset counts its new value');
  });
});

describe('gauge verdicts respect flow per target', () => {
  it('four healthy 40 s streams are never pinned: tokens streaming to the client are flow, though SGLang counts them only at the end', () => {
    const events: ScrapeEvent[] = [];
    for (let ms = 0; ms <= 45_000; ms += 1000) {
      const running = ms >= 1000 && ms < 41_000 ? 4 : 0;
      // generation_tokens_total moves when a request finishes: once, at 41 s.
      events.push(scrape('engine', ms, [g('sglang:num_running_reqs', running), g('sglang:cache_hit_rate', 0.4), c('sglang:generation_tokens_total', ms >= 41_000 ? 4000 : 0)]));
    }
    const streams = [0, 1, 2, 3].map((i) => ({ run_ms: 900 + i, e2e_ms: 40_000, status: 'ok', ttft_ms: 300 }));
    const verdicts = gaugeVerdicts(events, streams, PIN);
    const running = verdicts.find((v) => v.name === 'sglang:num_running_reqs')!;
    assert.notEqual(running.verdict, 'pinned', running.evidence.join('\n'));
    assert.equal(running.verdict, 'rotating', running.evidence.join('\n'));
    assert.match(running.evidence.join('\n'), /steady at 4 for 39\.0 s while work flowed through it: .*tokens streamed to the client 99% of it, never 30\.0 s without flow/);
    assert.ok(Math.abs(running.flow!.streaming_share! - 39.7 / 45) < 0.01, String(running.flow?.streaming_share));
    const ratio = verdicts.find((v) => v.name === 'sglang:cache_hit_rate')!;
    assert.equal(ratio.verdict, 'ratio', ratio.evidence.join('\n'));
    assert.match(ratio.evidence[0]!, /a ratio or rate, not a count of requests: .*not judged for pins/);
  });

  it('a frozen target beside a healthy one is judged on its own counters: completions elsewhere do not rescue it', () => {
    const events: ScrapeEvent[] = [];
    for (let ms = 0; ms <= 60_000; ms += 1000) {
      events.push(scrape('engine', ms, [g('sglang:num_running_reqs', ms % 3000 === 0 ? 0 : 2), c('sglang:generation_tokens_total', ms * 3)]));
      // The fake target: its gauge stuck at 1 from 5 s, its own counter frozen with it.
      events.push(scrape('fake', ms, [g('sglang:num_running_reqs', ms >= 5000 ? 1 : 0), c('sglang:generation_tokens_total', Math.min(ms, 5000))]));
    }
    const requests = steadyRequests(0, 60_000, 300); // ~200 client requests completing through the engine
    const verdicts = gaugeVerdicts(events, requests, PIN);
    const fake = verdicts.find((v) => v.target === 'fake')!;
    assert.equal(fake.verdict, 'pinned', fake.evidence.join('\n'));
    assert.match(fake.evidence[0]!, /client requests completed meanwhile, but through another server \(this target's own counter did not count them\)/);
    assert.equal(fake.flow?.client_counted, false);
    const engine = verdicts.find((v) => v.target === 'engine')!;
    assert.equal(engine.verdict, 'rotating');
    assert.equal(engine.flow?.client_counted, true);
  });

  it('ratio and rate gauges (token_usage, gen_throughput, *_perc) get no pin verdict, even stuck with nothing flowing', () => {
    const events: ScrapeEvent[] = [];
    for (let ms = 0; ms <= 60_000; ms += 1000)
      events.push(
        scrape('engine', ms, [
          g('sglang:token_usage', 0.37),
          g('sglang:gen_throughput', 12.5),
          g('vllm:kv_cache_usage_perc', 0.2),
          g('sglang:num_running_reqs', 1),
          c('sglang:generation_tokens_total', 10),
        ]),
      );
    const verdicts = gaugeVerdicts(events, [{ run_ms: 0, e2e_ms: 61_000, status: 'hang' }], PIN);
    assert.deepEqual(
      verdicts.map((v) => [v.name, v.verdict]),
      [
        ['sglang:gen_throughput', 'ratio'],
        ['sglang:num_running_reqs', 'pinned'],
        ['sglang:token_usage', 'ratio'],
        ['vllm:kv_cache_usage_perc', 'ratio'],
      ],
    );
  });

  it("the flow counter is one that moves: llama.cpp's tokens_predicted_total over a flat prompt counter, by its own prefix", () => {
    const selector = new SeriesSelector(DEFAULT_MONITOR_GAUGES, DEFAULT_MONITOR_COUNTERS);
    for (const name of [
      'llamacpp:prompt_tokens_total',
      'llamacpp:tokens_predicted_total',
      'llamacpp:n_decode_total',
      'vllm:generation_tokens_total',
      'vllm:request_success_total',
      'tgi_batch_inference_count',
      'tgi_request_success',
      'llamacpp:requests_processing',
      'vllm:num_requests_waiting',
      'tgi_queue_size',
    ]) {
      assert.notEqual(selector.kind(name), null, name);
    }
    const events: ScrapeEvent[] = [];
    for (let ms = 0; ms <= 60_000; ms += 1000) {
      events.push(scrape('llama', ms, [g('llamacpp:requests_processing', 2), c('llamacpp:prompt_tokens_total', 500), c('llamacpp:tokens_predicted_total', ms / 10)]));
    }
    const [v] = gaugeVerdicts(events, [], PIN);
    assert.equal(v?.flow?.counter, 'tokens_predicted_total', JSON.stringify(v?.flow));
    assert.equal(v?.verdict, 'rotating', v?.evidence.join('\n'));
    assert.doesNotMatch(v.evidence.join('\n'), /no flow counter/);
  });

  it('a target that stopped answering partway says so in its verdicts', () => {
    const events: ScrapeEvent[] = [];
    for (let ms = 0; ms <= 60_000; ms += 1000)
      events.push(scrape('decode', ms, [g('sglang:num_running_reqs', ms % 4000 === 0 ? 0 : 1), c('sglang:generation_tokens_total', ms)], ms >= 20_000 && ms < 30_000));
    for (let ms = 61_000; ms <= 70_000; ms += 1000) events.push(scrape('decode', ms, [], true));
    const [v] = gaugeVerdicts(events, steadyRequests(0, 70_000, 1000), PIN);
    const text = v!.evidence.join('\n');
    assert.match(text, /decode stopped answering scrapes from 20\.0 s to 30\.0 s \(10 failed: ERR_GET_TIMEOUT/);
    assert.match(text, /decode stopped answering scrapes at 61\.0 s and never answered again \(10 failed/);
  });
});

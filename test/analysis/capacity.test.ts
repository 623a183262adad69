import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_THRESHOLDS, SummaryBuilder, type Summary, type ThresholdLimits } from '../../src/analysis/index.js';
import type { PhaseEvent, RequestRecord, ScrapeEvent } from '../../src/types/index.js';

const T = '2026-01-01T00:00:00.000Z';
const STAGE_MS = 10_000;

/** A deterministic spread in [-1, 1): measurements are never all equal. */
function jitter(i: number): number {
  const x = Math.sin(i * 12.9898) * 43758.5453;
  return 2 * (x - Math.floor(x)) - 1;
}

function rateStage(name: string, index: number, rate: number): PhaseEvent {
  return { kind: 'phase', t: T, run_ms: index * STAGE_MS, name, load: { kind: 'arrival', from: rate, to: rate, ramp: 'step', length_ms: STAGE_MS } };
}

function request(phase: string, runMs: number, ttftMs: number, completion: number, status: RequestRecord['status'] = 'ok'): RequestRecord {
  return {
    t: T,
    run_ms: runMs,
    agent: 0,
    conversation: 'a0-c1',
    round: 1,
    phase,
    path: 'direct',
    status,
    http_status: status === 'ok' ? 200 : 500,
    headers_ms: 5,
    ttft_ms: status === 'ok' ? ttftMs : null,
    e2e_ms: ttftMs + 200,
    server_ttft_ms: null,
    itl: status === 'ok' ? { count: completion, p50_ms: 5, p99_ms: 9, max_ms: 10 } : null,
    chunks: 3,
    bytes: 100,
    request_bytes: 100,
    prompt_tokens: 10,
    completion_tokens: status === 'ok' ? completion : null,
    cached_tokens: null,
    tokens_estimated: false,
    finish_reason: status === 'ok' ? 'stop' : null,
    tool_calls: [],
    content_chars: 20,
    reasoning_chars: 0,
    error: status === 'ok' ? null : { class: 'http_5xx', code: null, message: 'boom' },
    hang: null,
    connection: null,
  } as RequestRecord;
}

interface StagePlan {
  name: string;
  /** The offered level (conversations/s, or agents for a sweep level). */
  level: number;
  /** Requests a second and tokens each: the throughput the stage reaches. */
  perSecond: number;
  tokens: number;
  ttftMs: number;
  failedEvery?: number;
  queue?: number;
}

/** A ramp run through the summary, one request record after another in time order, scrapes every second. */
function ramp(stages: StagePlan[], thresholds: Partial<ThresholdLimits> = {}, options: { sweep?: boolean; scrapes?: boolean } = {}): Summary {
  const b = new SummaryBuilder({ itlFromRecords: true, windowS: 1, plannedS: (stages.length * STAGE_MS) / 1000, thresholds: { ...DEFAULT_THRESHOLDS, ...thresholds }, thinkTimeMs: 100 });
  let n = 0;
  stages.forEach((st, k) => {
    const startMs = k * STAGE_MS;
    b.addLoad(options.sweep === true ? { kind: 'phase', t: T, run_ms: startMs, name: st.name, agents: st.level, warmup_ms: 0 } : rateStage(st.name, k, st.level));
    for (let s = 0; s < STAGE_MS / 1000; s += 1) {
      const count = Math.round(st.perSecond * (1 + 0.1 * jitter(n)));
      for (let i = 0; i < count; i += 1) {
        n += 1;
        const failed = st.failedEvery !== undefined && n % st.failedEvery === 0;
        b.add(request(st.name, startMs + s * 1000 + (i * 900) / count, st.ttftMs * (1 + 0.2 * jitter(n * 7)), st.tokens, failed ? 'error' : 'ok'));
      }
      if (options.scrapes === true) {
        const scrape: ScrapeEvent = {
          kind: 'scrape',
          t: T,
          run_ms: startMs + s * 1000 + 500,
          target: 'engine',
          url: 'http://e/metrics',
          duration_ms: 1,
          ok: true,
          error: null,
          burst: false,
          samples: [
            { name: 'sglang:num_queue_reqs', labels: {}, value: st.queue ?? 0, type: 'gauge' },
            { name: 'sglang:num_running_reqs', labels: {}, value: 8, type: 'gauge' },
            { name: 'sglang:token_usage', labels: {}, value: 0.25, type: 'gauge' },
          ],
        };
        b.addScrape(scrape);
      }
    }
  });
  return b.build({ name: 'ramp', status: 'completed', started_at: T, ended_at: T, wall_s: (stages.length * STAGE_MS) / 1000 + 0.5, target: 'http://x', path: 'direct', labels: {} });
}

test('the knee is the last stage before TTFT p50 climbs past the lightest stage’s p99: queueing, with the gauges there', () => {
  const s = ramp(
    [
      { name: 's1-r1', level: 1, perSecond: 5, tokens: 40, ttftMs: 20 },
      { name: 's2-r4', level: 4, perSecond: 20, tokens: 40, ttftMs: 22 },
      { name: 's3-r8', level: 8, perSecond: 40, tokens: 40, ttftMs: 400, queue: 30 },
      { name: 's4-r12', level: 12, perSecond: 42, tokens: 40, ttftMs: 1500, queue: 90 },
    ],
    {},
    { scrapes: true },
  );
  const c = s.capacity!;
  assert.equal(c.unit, 'rate_per_s');
  assert.deepEqual(c.knee, { phase: 's2-r4', rate_per_s: 4 });
  assert.equal(c.past?.phase, 's3-r8');
  assert.equal(c.past?.rate_per_s, 8);
  assert.deepEqual(
    c.past?.reasons.map((r) => r.kind),
    ['queueing'],
  );
  assert.match(c.past.reasons[0]!.text, /TTFT p50 \d+ ms \(95% .*n 4\d\d\) > s1-r1's TTFT p99/);
  const g = c.past.gauges![0]!;
  assert.equal(g.target, 'engine');
  assert.equal(g.queue_max, 30);
  assert.equal(g.kv_usage_max, 0.25);
  assert.deepEqual(
    c.stages.map((st) => st.holds),
    [true, true, false, false],
  );
  // The throughput is judged against its noise: 40 → 42 requests a second is within it.
  assert.ok(c.stages[3]!.reasons.some((r) => r.kind === 'throughput_flat'));
  for (const st of c.stages) {
    assert.ok(st.ttft !== null && st.ttft.p50_low_ms <= st.ttft.p50_ms && st.ttft.p50_ms <= st.ttft.p50_high_ms, `${st.phase}: p50 inside its interval`);
    assert.ok(st.throughput.se !== null && st.throughput.windows >= 8, `${st.phase}: throughput over its windows`);
  }
});

test('throughput that stops rising is past the knee even while TTFT holds; no scrape is "not reported" (null)', () => {
  const s = ramp([
    { name: 's1-r1', level: 1, perSecond: 5, tokens: 40, ttftMs: 20 },
    { name: 's2-r4', level: 4, perSecond: 20, tokens: 40, ttftMs: 20 },
    { name: 's3-r8', level: 8, perSecond: 20, tokens: 40, ttftMs: 21 },
  ]);
  const c = s.capacity!;
  assert.deepEqual(c.knee, { phase: 's2-r4', rate_per_s: 4 });
  assert.deepEqual(
    c.past?.reasons.map((r) => r.kind),
    ['throughput_flat'],
  );
  assert.equal(c.past?.gauges, null);
});

test('with thresholds.ttft_p99_ms the limit decides latency (no queueing rule), judged on the p99’s interval', () => {
  const stages = [
    { name: 's1-r1', level: 1, perSecond: 5, tokens: 40, ttftMs: 20 },
    { name: 's2-r4', level: 4, perSecond: 20, tokens: 40, ttftMs: 300 },
    { name: 's3-r8', level: 8, perSecond: 40, tokens: 40, ttftMs: 3000 },
  ];
  const c = ramp(stages, { ttft_p99_ms: 1000 }).capacity!;
  assert.deepEqual(c.knee, { phase: 's2-r4', rate_per_s: 4 });
  assert.deepEqual(
    c.past?.reasons.map((r) => r.kind),
    ['latency'],
  );
  assert.match(c.basis, /TTFT p99 ≤ 1.00 s/);
  // Without the limit, the same run queues already at 4/s.
  assert.deepEqual(ramp(stages).capacity!.past?.phase, 's2-r4');
});

test('errors count against thresholds.error_rate on their Wilson interval: 1 in 200 holds, 1 in 10 does not', () => {
  const c = ramp([
    { name: 's1-r1', level: 1, perSecond: 20, tokens: 40, ttftMs: 20, failedEvery: 200 },
    { name: 's2-r2', level: 2, perSecond: 40, tokens: 40, ttftMs: 20, failedEvery: 10 },
  ]).capacity!;
  assert.deepEqual(c.knee, { phase: 's1-r1', rate_per_s: 1 });
  assert.deepEqual(
    c.past?.reasons.map((r) => r.kind),
    ['errors'],
  );
});

test('a sweep of agent counts is judged the same way, in agents; every stage holding puts the knee at the last', () => {
  const c = ramp(
    [
      { name: 'c4', level: 4, perSecond: 10, tokens: 40, ttftMs: 20 },
      { name: 'c8', level: 8, perSecond: 20, tokens: 40, ttftMs: 21 },
      { name: 'c16', level: 16, perSecond: 40, tokens: 40, ttftMs: 22 },
    ],
    {},
    { sweep: true },
  ).capacity!;
  assert.equal(c.unit, 'agents');
  assert.deepEqual(c.knee, { phase: 'c16', agents: 16 });
  assert.equal(c.past, null);
});

test('one level is no ramp (no capacity); a ramp down ends the stages judged; the first stage failing leaves no knee', () => {
  assert.equal(ramp([{ name: 's1-r1', level: 1, perSecond: 5, tokens: 40, ttftMs: 20 }]).capacity, undefined);
  const down = ramp([
    { name: 's1-r1', level: 1, perSecond: 5, tokens: 40, ttftMs: 20 },
    { name: 's2-r4', level: 4, perSecond: 20, tokens: 40, ttftMs: 20 },
    { name: 's3-r2', level: 2, perSecond: 10, tokens: 40, ttftMs: 20 },
  ]).capacity!;
  assert.deepEqual(
    down.stages.map((st) => st.phase),
    ['s1-r1', 's2-r4'],
  );
  const none = ramp([
    { name: 's1-r1', level: 1, perSecond: 20, tokens: 40, ttftMs: 20, failedEvery: 3 },
    { name: 's2-r4', level: 4, perSecond: 40, tokens: 40, ttftMs: 20 },
  ]).capacity!;
  assert.equal(none.knee, null);
  assert.equal(none.past?.phase, 's1-r1');
});

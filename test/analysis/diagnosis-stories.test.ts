// Right verdict, right story (issue 41, class 5), from the gauge's samples to the diagnosis's sentence: a pin's
// evidence names the floor step the hung request made (at its send, the scrape right after it), not a later
// step of the load rotating above it. (The idle-connection stories are in diagnosis-idle.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, type DiagnosisInput } from '../../src/analysis/index.js';
import { gaugeVerdicts } from '../../src/monitor/index.js';
import type { Diagnosis, GaugeSample, ScrapeEvent } from '../../src/types/index.js';
import { activity, client, flow, hang, scrapes, steadyRequests } from './diagnosis-fixtures.js';

const RUN_MS = 40_000;
const INTERVAL_MS = 200;
const INFLIGHT = 'sglang:num_prefill_inflight_queue_reqs';
const text = (d: Diagnosis): string => d.evidence.join('\n');

/** The prefill's scrapes with its inflight queue at `gauge(ms)`, its token counter moving. */
function prefillScrapes(gauge: (ms: number) => number): ScrapeEvent[] {
  const out: ScrapeEvent[] = [];
  for (let ms = 0; ms <= RUN_MS; ms += INTERVAL_MS) {
    const samples: GaugeSample[] = [
      { name: INFLIGHT, labels: { engine_type: 'prefill' }, value: gauge(ms), type: 'gauge' },
      { name: 'sglang:generation_tokens_total', labels: {}, value: ms, type: 'counter' },
    ];
    out.push({ kind: 'scrape', t: new Date(ms).toISOString(), run_ms: ms, target: 'prefill', url: 'http://prefill/metrics', duration_ms: 3, ok: true, error: null, burst: false, samples });
  }
  return out;
}

/** A direct run around the prefill's inflight queue at `gauge(ms)`, one request sent at 4.8 s and hung at its
 * first token 30 s later, the others completing every 400 ms. */
function pinnedRun(gauge: (ms: number) => number): DiagnosisInput {
  const requests = [
    ...Array.from({ length: RUN_MS / 400 - 1 }, (_, i) => ({ run_ms: i * 400, e2e_ms: 400, status: 'ok', ttft_ms: 50 })),
    { run_ms: 4800, e2e_ms: 30_000, status: 'hang', ttft_ms: null, hang: { phase: 'first_token' as const, deadline: 'first_token_ms' as const, deadline_ms: 30_000, last_byte_age_ms: 29_995 } },
  ];
  return {
    path: 'direct',
    loopback: true,
    hangs: [hang(4800, 34_800, 'first_token', 'direct', 30_000)],
    canaries: [],
    scrapes: scrapes(
      'prefill',
      RUN_MS,
      INTERVAL_MS,
      [],
      () => 0,
      3,
      () => 1,
    ),
    flows: [flow('prefill', RUN_MS, INTERVAL_MS, [])],
    gauges: gaugeVerdicts(prefillScrapes(gauge), requests, { pinAfterS: 30 }),
    client: client(RUN_MS),
    activity: activity(steadyRequests(RUN_MS, [])),
  };
}

/** Before 5.0 s the load passes through the queue (1 in a fifth of the scrapes), then the request pinned at 5.0 s
 * holds it at 1 or more while the others rotate above it (2 every other second). */
const pinnedAt5 = (ms: number): number => (ms < 5000 ? (ms % 1000 < 200 ? 1 : 0) : ms % 2000 < 400 ? 2 : 1);

/**
 * One request sent at 4.8 s and pinned in the inflight queue (the floor steps from 0 to 1 at the scrape of
 * 5.0 s), the others rotating through the queue above it; from 9.0 s the load holds the queue at 2 or more (3
 * every other second) to the end: a second floor, one higher, that stepped up 4.2 s after the send, within
 * pin_after_s of it.
 */
function pinnedThenLoadSteps(): DiagnosisInput {
  return pinnedRun((ms) => (ms < 9000 ? pinnedAt5(ms) : ms % 2000 < 400 ? 3 : 2));
}

test("a pin's evidence names the step the hung request made at its send, not the later step of the load above it", () => {
  const d = diagnose(pinnedThenLoadSteps());
  assert.equal(d.verdict, 'engine', text(d));
  assert.deepEqual(d.held_in, ["prefill's inflight queue (KV transfer to decode)"]);
  assert.match(text(d), /prefill's sglang:num_prefill_inflight_queue_reqs floor stepped from 0 to 1 at 5\.0 s, when the failed request sent at 4\.8 s went in/);
  assert.doesNotMatch(text(d), /stepped from 1 to 2|at 9\.0 s/);
});

test('a request that joined a floor the load already held (the queue never empty from 4.0 s to its send at 4.8 s) is told as that, not as the step it made', () => {
  const d = diagnose(pinnedRun((ms) => (ms < 4000 ? pinnedAt5(ms) : pinnedAt5(ms + 1000))));
  assert.equal(d.verdict, 'engine', text(d));
  assert.match(
    text(d),
    /floor stepped from 0 to 1 at 4\.0 s, 800 ms before the failed request it matches was sent \(4\.8 s\): the load held the queue at 1 already, and that request kept it there from its send on/,
  );
});

test('a floor seen a scrape before the send is not told as the moment the request went in (a step before a send is not its doing)', () => {
  // The load keeps the queue at 1 from 4.6 s; the request sent at 4.8 s joins it and holds it.
  const d = diagnose(pinnedRun((ms) => (ms < 4600 ? pinnedAt5(ms) : pinnedAt5(ms + 1000))));
  assert.match(text(d), /floor stepped from 0 to 1 at 4\.6 s, 200 ms before the failed request it matches was sent \(4\.8 s\): the load held the queue at 1 already/);
  assert.doesNotMatch(text(d), /when the failed request sent at 4\.8 s went in/);
});

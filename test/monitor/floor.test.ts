// A queue gauge's floor judged over time (issue 22): one request stuck in a PD queue while load rotates above
// it is `pinned_under_load`, tied to the hung request sent with it; the incident's steady 1 that rotates, a
// floor no request of the run matches, and a running-batch gauge's floor are not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gaugeVerdicts } from '../../src/monitor/index.js';
import type { GaugeSample, GaugeVerdict, HangInfo, ScrapeEvent } from '../../src/types/index.js';

const LABELS = { model_name: 'm', engine_type: 'prefill', tp_rank: '0' };
const INFLIGHT = 'sglang:num_prefill_inflight_queue_reqs';
const INTERVAL_MS = 200;

function scrapes(durationS: number, gauge: (ms: number) => number, name = INFLIGHT): ScrapeEvent[] {
  const out: ScrapeEvent[] = [];
  for (let ms = 0; ms <= durationS * 1000; ms += INTERVAL_MS) {
    const samples: GaugeSample[] = [
      { name, labels: LABELS, value: gauge(ms), type: 'gauge' },
      { name: 'sglang:generation_tokens_total', labels: { model_name: 'm' }, value: ms, type: 'counter' },
    ];
    out.push({ kind: 'scrape', t: new Date(ms).toISOString(), run_ms: ms, target: 'prefill', url: 'http://prefill/metrics', duration_ms: 3, ok: true, error: null, burst: false, samples });
  }
  return out;
}

type Req = { run_ms: number; e2e_ms: number; status: string; ttft_ms?: number | null; hang?: HangInfo | null };

/** Requests completing one after another, 400 ms each, with their first token at 50 ms. */
function flowing(fromMs: number, toMs: number): Req[] {
  const out: Req[] = [];
  for (let t = fromMs; t + 400 <= toMs; t += 400) out.push({ run_ms: t, e2e_ms: 400, status: 'ok', ttft_ms: 50 });
  return out;
}

function firstTokenHang(sentMs: number, waitedMs: number): Req {
  return { run_ms: sentMs, e2e_ms: waitedMs, status: 'hang', ttft_ms: null, hang: { phase: 'first_token', deadline: 'first_token_ms', deadline_ms: waitedMs, last_byte_age_ms: waitedMs - 5 } };
}

/** 0 before the pin, then at least 1, 2 every other second while others pass through. */
const pinnedAt = (onsetMs: number) => (ms: number) => (ms < onsetMs ? (ms % 1000 < 200 ? 1 : 0) : ms % 2000 < 400 ? 2 : 1);

function verdictOf(vs: GaugeVerdict[], name = INFLIGHT): GaugeVerdict {
  const v = vs.find((x) => x.name === name);
  assert.ok(v !== undefined, JSON.stringify(vs.map((x) => x.name)));
  return v;
}

describe('queue floors', () => {
  it('a request pinned in the inflight queue while others rotate above it is pinned_under_load, tied to the hung request', () => {
    const v = verdictOf(gaugeVerdicts(scrapes(60, pinnedAt(5000)), [...flowing(0, 60_000), firstTokenHang(4800, 30_000)], { pinAfterS: 30 }));
    assert.equal(v.verdict, 'pinned_under_load');
    assert.equal(v.floor?.level, 1);
    assert.equal(v.floor?.from_ms, 5000);
    assert.equal(v.floor?.to_ms, null);
    assert.ok((v.floor?.returns ?? 0) >= 20, String(v.floor?.returns));
    assert.deepEqual(
      v.floor?.requests.map((r) => [r.start_ms, r.status, r.phase]),
      [[4800, 'hang', 'first_token']],
    );
    assert.match(v.evidence[0]!, /floor stepped up from 0 to 1: never below 1 since 5\.0 s .* while the value rotated above it/);
    assert.match(v.evidence[1]!, /a request sent at 4\.8 s hung at first_token at 34\.8 s: its life matches the step/);
    // Rotation above a floor is not a dip to 0: said as returns to the floor.
    assert.deepEqual(v.stuck, { from_ms: 5000, to_ms: 60_000 });
  });

  it('a short floor on a hand-off queue that outlived the hung request is pinned_under_load before pin_after_s', () => {
    const gauge = (ms: number) => (ms < 1000 ? 0 : ms < 16_000 ? (ms % 2000 < 400 ? 2 : 1) : 0);
    const v = verdictOf(gaugeVerdicts(scrapes(18, gauge), [...flowing(0, 18_000), firstTokenHang(800, 15_000)], { pinAfterS: 30 }));
    assert.equal(v.verdict, 'pinned_under_load');
    assert.equal(v.floor?.to_ms, 16_000);
  });

  it('the same floor with no failed request of the run is rotating, with the floor said as a caveat', () => {
    const v = verdictOf(gaugeVerdicts(scrapes(60, pinnedAt(5000)), flowing(0, 60_000), { pinAfterS: 30 }));
    assert.equal(v.verdict, 'rotating');
    assert.ok(v.evidence.some((e) => /^floor stepped up from 0 to 1: never below 1 since 5\.0 s/.test(e)));
    assert.ok(v.evidence.some((e) => /no failed or slow request of this run matches the step/.test(e)));
    assert.ok(!v.evidence.some((e) => /dips? over/.test(e)), 'steps from 2 to 1 are not counted as dips');
  });

  it("the incident's steady 1 that rotates is insufficient at 18 s and rotating at 85 s, never pinned, even beside a hang", () => {
    // 1 nearly all the time, back to 0 for 1.5 s every 30 s, requests completing throughout.
    const steady = (ms: number) => (ms < 1000 ? 0 : ms % 30_000 >= 28_500 ? 0 : 1);
    const requests = [...flowing(0, 85_000), firstTokenHang(40_000, 15_000)];
    const short = verdictOf(gaugeVerdicts(scrapes(18, steady), requests, { pinAfterS: 30 }));
    assert.equal(short.verdict, 'insufficient');
    const long = verdictOf(gaugeVerdicts(scrapes(85, steady), requests, { pinAfterS: 30 }));
    assert.equal(long.verdict, 'rotating');
  });

  it('more hung requests than the step is high is load, not one stuck request', () => {
    const hangs = [firstTokenHang(4800, 30_000), firstTokenHang(4900, 30_000), firstTokenHang(5100, 30_000)];
    const v = verdictOf(gaugeVerdicts(scrapes(60, pinnedAt(5000)), [...flowing(0, 60_000), ...hangs], { pinAfterS: 30 }));
    assert.notEqual(v.verdict, 'pinned_under_load');
  });

  it("a running-batch gauge is not judged by its floor (SGLang's prefill reports at least 1 there always)", () => {
    const name = 'sglang:num_running_reqs';
    const v = verdictOf(gaugeVerdicts(scrapes(60, pinnedAt(5000), name), [...flowing(0, 60_000), firstTokenHang(4800, 30_000)], { pinAfterS: 30 }), name);
    assert.equal(v.verdict, 'rotating');
    assert.equal(v.floor, undefined);
  });

  it('a gauge that was at its floor from the first sample has no step to tie a request to', () => {
    const v = verdictOf(
      gaugeVerdicts(
        scrapes(60, (ms) => (ms % 2000 < 400 ? 2 : 1)),
        [...flowing(0, 60_000), firstTokenHang(100, 30_000)],
        { pinAfterS: 30 },
      ),
    );
    assert.notEqual(v.verdict, 'pinned_under_load');
  });
  it('the step named is the one the hung request made at its send, not a later step of the load above it (issue 41, class 5)', () => {
    // Pinned at 5.0 s (sent at 4.8 s); from 9.0 s on the load holds the gauge at 2 or more (3 every other
    // second): a floor at 2 that stepped up later and held 51 s, within pin_after_s of the send.
    const gauge = (ms: number) => (ms < 5000 ? (ms % 1000 < 200 ? 1 : 0) : ms < 9000 ? (ms % 2000 < 400 ? 2 : 1) : ms % 2000 < 400 ? 3 : 2);
    const v = verdictOf(gaugeVerdicts(scrapes(60, gauge), [...flowing(0, 60_000), firstTokenHang(4800, 30_000)], { pinAfterS: 30 }));
    assert.equal(v.verdict, 'pinned_under_load');
    assert.deepEqual([v.floor?.level, v.floor?.from_ms], [1, 5000], JSON.stringify(v.floor));
    assert.deepEqual(
      v.floor?.requests.map((r) => r.start_ms),
      [4800],
    );
    assert.match(v.evidence[0]!, /floor stepped up from 0 to 1: never below 1 since 5\.0 s/);
  });
  it('a backlog: a dozen hung requests spread over the floor steps of a queue the load fills is load, never one pinned request, whichever step each first met', () => {
    // The floor rises 0 → 3 at 2 s and 3 → 4 at 4 s, held to the end, rotating one above it; twelve requests
    // sent from 1.8 s to 6.2 s hang there. Tied each to the first step seen from its send on, no step holds more
    // than its height of them — but within reach of each step are more failures than its height: a backlog.
    const backlog = (ms: number): number => (ms < 2000 ? 0 : (ms < 4000 ? 3 : 4) + (ms % 1000 < 200 ? 1 : 0));
    const hung = Array.from({ length: 12 }, (_, k) => firstTokenHang(1800 + 400 * k, 30_000));
    const v = verdictOf(gaugeVerdicts(scrapes(60, backlog), [...flowing(0, 60_000), ...hung], { pinAfterS: 30 }));
    assert.notEqual(v.verdict, 'pinned_under_load', JSON.stringify(v.floor));
  });
});

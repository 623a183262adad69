// The summary builder takes scrapes the way a live run and `roundload report` feed them, and fills
// `gauges` and `scrape_targets`.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryBuilder } from '../../src/analysis/index.js';
import type { RequestRecord, ScrapeEvent } from '../../src/types/index.js';

const RUN = { name: 'x', status: 'completed', started_at: null, ended_at: null, wall_s: 60, target: 't', path: 'direct', labels: {} };

function scrape(ms: number, value: number, tokens: number, ok = true): ScrapeEvent {
  return {
    kind: 'scrape',
    t: '',
    run_ms: ms,
    target: 'prefill',
    url: 'http://p/metrics',
    duration_ms: 2,
    ok,
    error: ok ? null : 'HTTP 503',
    burst: false,
    samples: ok
      ? [
          { name: 'sglang:num_prefill_inflight_queue_reqs', labels: { model_name: 'm' }, value, type: 'gauge' },
          { name: 'sglang:generation_tokens_total', labels: { model_name: 'm' }, value: tokens, type: 'counter' },
        ]
      : [],
  };
}

it('SummaryBuilder.addScrape feeds the verdicts (pin_after_s from the options) and the per-target scrape figures', () => {
  const b = new SummaryBuilder({ itlFromRecords: true, pinAfterS: 10 });
  b.add({
    run_ms: 1000,
    e2e_ms: 40_000,
    status: 'hang',
    phase: 'main',
    round: 1,
    agent: 0,
    conversation: 'a0-c1',
    connection: null,
    hang: { phase: 'first_token', deadline: 'first_token_ms', deadline_ms: 40_000, last_byte_age_ms: 40_000 },
  } as unknown as RequestRecord);
  for (let ms = 0; ms <= 30_000; ms += 1000) b.addScrape(scrape(ms, ms === 0 ? 0 : 1, 100, ms !== 15_000));
  const s = b.build(RUN);
  assert.equal(s.gauges.length, 1);
  assert.equal(s.gauges[0]!.verdict, 'pinned', s.gauges[0]!.evidence.join('\n'));
  assert.equal(s.gauges[0]!.longest_nonzero_s, 14, 'the failed scrape at 15 s split the stretch (16-30 s)');
  assert.deepEqual(s.scrape_targets, [
    {
      target: 'prefill',
      url: 'http://p/metrics',
      scrapes: 31,
      failed: 1,
      burst: 0,
      interval_ms_p50: 1000,
      interval_ms_max: 1000,
      last_error: 'HTTP 503',
      series: 2,
      down: [{ from_ms: 15_000, to_ms: 16_000, failed: 1, error: 'HTTP 503' }],
    },
  ]);
  // Without scrapes: nothing.
  const empty = new SummaryBuilder({ itlFromRecords: true }).build(RUN);
  assert.deepEqual([empty.gauges, empty.scrape_targets], [[], []]);
});

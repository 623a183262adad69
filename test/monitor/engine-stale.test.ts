// Real scrapes of a real (embedded) engine left idle after one request: its running gauge still says 1 (the
// last stats log), its counters do not move, nothing is in flight: the verdict is stale, not pinned.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { DEFAULT_MONITOR_COUNTERS, DEFAULT_MONITOR_GAUGES } from '../../src/config/index.js';
import { fetchMetrics, gaugeVerdicts, Scraper, SeriesSelector } from '../../src/monitor/index.js';
import { realClock } from '../../src/watchdog/index.js';
import type { ScrapeEvent } from '../../src/types/index.js';
import { engine, streamChat, USER } from '../engine/helpers.js';

it('a gauge left at 1 by an idle engine is judged stale from real scrapes', async (t) => {
  // One unified server: its URL is its /metrics (a PD deployment's entry is the router).
  const e = await engine({ topology: 'single', decode_step_ms: 1, decode_step_ms_per_running: 0, kv_transfer_ms: 0, output_tokens_min: 100, output_tokens_max: 100, tool_call_ratio: 0 }, t);
  const started = performance.now();
  const r = await streamChat(e.url, { messages: [USER('then idle')] });
  const requestEnd = performance.now() - started;
  assert.equal(r.finishReason, 'stop');
  const scrapes: ScrapeEvent[] = [];
  const scraper = new Scraper({
    targets: [{ name: 'engine', url: e.url }],
    intervalMs: 50,
    timeoutMs: 1000,
    burstIntervalMs: 50,
    burstDurationMs: 1000,
    selector: new SeriesSelector(DEFAULT_MONITOR_GAUGES, DEFAULT_MONITOR_COUNTERS),
    clock: realClock,
    runStartMs: started,
    fetch: fetchMetrics,
    emit: (ev) => {
      if (ev.kind === 'scrape') scrapes.push(ev);
    },
  });
  scraper.start();
  await new Promise((res) => setTimeout(res, 1200));
  await scraper.stop();
  assert.ok(scrapes.length >= 10 && scrapes.every((s) => s.ok), `${scrapes.length} scrapes`);
  const verdicts = gaugeVerdicts(scrapes, [{ run_ms: 0, e2e_ms: requestEnd, status: 'ok' }], { pinAfterS: 0.5 });
  const running = verdicts.find((v) => v.name === 'sglang:num_running_reqs')!;
  t.diagnostic(running.evidence.join(' | '));
  assert.equal(running.last_value, 1);
  assert.equal(running.verdict, 'stale');
  assert.match(running.evidence[0]!, /while no client request was in flight and generation_tokens_total did not move: a stale reading/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun, RunBus } from '../../src/run/index.js';
import { ClientMetricsService } from '../../src/run/client-metrics.js';
import type { RunContext } from '../../src/run/service.js';
import type { RequestRecord } from '../../src/types/index.js';
import { plainRecord } from '../report/fixtures.js';
import { tempDir } from '../helpers/tmp.js';

async function scrape(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  return res.text();
}

/** The value of one series line, e.g. `roundload_requests_total{phase="main",status="ok"}`. */
function value(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    const at = line.lastIndexOf(' ');
    if (
      at > 0 &&
      line
        .slice(0, at)
        .replace(/,?workload="[^"]*"/, '')
        .replace('{,', '{')
        .replace(/\{\}$/, '') === series
    )
      return Number(line.slice(at + 1));
  }
  return undefined;
}

/** A plain request with this file's figures (ttft 80 ms, e2e 700 ms, 40 tokens), sent now. */
function record(over: Partial<RequestRecord>): RequestRecord {
  return plainRecord({ t: new Date().toISOString(), ttft_ms: 80, e2e_ms: 700, completion_tokens: 40, ...over });
}

test('the client metrics endpoint counts requests by status, hangs by phase, errors by class, and bins latencies in seconds', async (t) => {
  const workload = parseWorkload('name: m\n', 'm.yaml');
  const bus = new RunBus();
  let inFlight = 3;
  const logs: string[] = [];
  const ctx: RunContext = {
    workload,
    dir: tempDir(t),
    bus,
    runStartMs: 0,
    requestUrl: 'x',
    engineUrl: 'x',
    path: 'direct',
    stop: new AbortController().signal,
    log: (l) => logs.push(l),
    inFlight: () => inFlight,
  };
  const service = new ClientMetricsService({ host: '127.0.0.1', port: 0 });
  await service.start(ctx);
  t.after(() => service.stop());
  assert.match(logs[0] ?? '', /^client metrics on http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  bus.emit({ kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 1, run_ms: 0 });
  bus.emit({ kind: 'request', record: record({}) });
  bus.emit({ kind: 'request', record: record({ ttft_ms: 3000, e2e_ms: 4000 }) });
  bus.emit({ kind: 'request', record: record({ status: 'hang', ttft_ms: null, hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 1, last_byte_age_ms: 1 } }) });
  bus.emit({ kind: 'request', record: record({ status: 'error', ttft_ms: null, error: { class: 'keepalive_race', message: 'x', code: null } }) });
  const text = await scrape(service.url!);
  assert.equal(value(text, 'roundload_requests_in_flight'), 3);
  assert.equal(value(text, 'roundload_requests_total{phase="main",status="ok"}'), 2);
  assert.equal(value(text, 'roundload_requests_total{phase="main",status="hang"}'), 1);
  assert.equal(value(text, 'roundload_hangs_total{hang_phase="mid_stream"}'), 1);
  assert.equal(value(text, 'roundload_errors_total{class="keepalive_race"}'), 1);
  assert.equal(value(text, 'roundload_conversations_total'), 1);
  assert.equal(value(text, 'roundload_output_tokens_total'), 80);
  assert.equal(value(text, 'roundload_ttft_seconds_bucket{le="0.1",phase="main"}'), 1, 'an 80 ms TTFT is under 0.1 s');
  assert.equal(value(text, 'roundload_ttft_seconds_bucket{le="5",phase="main"}'), 2);
  assert.equal(value(text, 'roundload_e2e_seconds_count{phase="main"}'), 2);
  assert.match(text, /workload="m"/, 'every series carries the workload name');
  inFlight = 0;
  assert.equal(value(await scrape(service.url!), 'roundload_requests_in_flight'), 0, 'the gauge is read at scrape time');
  const other = await fetch(service.url!.replace('/metrics', '/'), { signal: AbortSignal.timeout(5000) });
  assert.equal(other.status, 404);
  await other.text();
});

test('a run with client_metrics.port serves /metrics while agents run and closes it at the end', async (t) => {
  const workload = parseWorkload(
    'name: metrics-run\nagents: {count: 3, rounds: 6, think_time_ms: 0}\nclient_metrics: {port: 0}\nengine: {decode_step_ms: 4, output_tokens_min: 20, output_tokens_max: 30}\n',
    'metrics-run.yaml',
  );
  let url: string | null = null;
  // Widened on purpose: it is assigned in a callback, which narrowing does not see.
  let scraped = null as Promise<string> | null;
  let done = 0;
  const result = await executeRun({
    workload,
    out: join(tempDir(t), 'run'),
    log: (line) => {
      const m = /client metrics on (\S+)/.exec(line);
      if (m !== null) url = m[1]!;
    },
    onEvent: (e) => {
      if (e.kind !== 'request') return;
      done += 1;
      // Mid-run: after 4 of the 18 requests, while the other agents are still streaming.
      if (done === 4 && url !== null) scraped = scrape(url);
    },
  });
  assert.equal(result.status, 'completed');
  assert.ok(url !== null, 'the endpoint was announced');
  assert.ok(scraped !== null, 'scraped during the run');
  const text = await scraped;
  const ok = value(text, 'roundload_requests_total{phase="main",status="ok"}') ?? 0;
  assert.ok(ok >= 4 && ok < 18, `mid-run count ${ok}`);
  assert.ok((value(text, 'roundload_ttft_seconds_count{phase="main"}') ?? 0) >= 4);
  assert.ok(value(text, 'roundload_requests_in_flight') !== undefined);
  await assert.rejects(fetch(url, { signal: AbortSignal.timeout(2000) }), 'the endpoint is closed after the run');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { startMetricsExport, type MetricsExportSettings } from '../../src/export/index.js';
import { hostAllowed } from '../../src/export/server.js';
import { DIAGNOSIS_VERDICTS, GAUGE_VERDICTS, type RequestRecord } from '../../src/types/index.js';
import { plainRecord } from '../report/fixtures.js';
import { tempDir } from '../helpers/tmp.js';
import { VERDICTS, exposed } from './wire.js';

async function scrape(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
  return res.text();
}

/** A plain request with this file's figures (ttft 80 ms, e2e 700 ms, 40 tokens, ITL mean 15 ms), sent now. */
function record(over: Partial<RequestRecord>): RequestRecord {
  return plainRecord({ t: new Date().toISOString(), ttft_ms: 80, e2e_ms: 700, completion_tokens: 40, itl: { count: 39, mean_ms: 15, p50_ms: 14, p99_ms: 40, max_ms: 60 }, ...over });
}

const SETTINGS: MetricsExportSettings = { port: 0, host: '127.0.0.1', linger_s: 0, remote_write_url: null, remote_write_timeout_s: 10, remote_write_interval_s: 10 };

test('the metrics endpoint counts requests by status and class, hangs by phase, bins TTFT/ITL/e2e in seconds, and shows the loop delay and the run info', async (t) => {
  let inFlight = 3;
  const logs: string[] = [];
  const exported = await startMetricsExport({
    settings: SETTINGS,
    workload: 'm',
    run: '20260101-000000-m',
    version: '9.9.9',
    labels: { 'git-sha': 'abc123' },
    inFlight: () => inFlight,
    log: (l) => logs.push(l),
  });
  t.after(() => exported.close());
  assert.match(logs[0] ?? '', /^client metrics on http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const url = exported.url!;
  const hang = record({ status: 'hang', ttft_ms: null, itl: null, hang: { phase: 'mid_stream', deadline: 'stall_ms', deadline_ms: 1, last_byte_age_ms: 1 } });
  exported.onEvent({ kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 1, run_ms: 0 });
  exported.onEvent({ kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 2, run_ms: 0 });
  exported.onEvent({ kind: 'request', record: record({}) });
  exported.onEvent({ kind: 'request', record: record({ ttft_ms: 3000, e2e_ms: 4000, itl: { count: 10, mean_ms: 120, p50_ms: 100, p99_ms: 300, max_ms: 300 } }) });
  exported.onEvent({ kind: 'hang', t: '', run_ms: 1, record: hang });
  exported.onEvent({ kind: 'request', record: hang });
  exported.onEvent({ kind: 'request', record: record({ status: 'error', ttft_ms: null, error: { class: 'keepalive_race', message: 'x', code: null } }) });
  exported.onEvent({ kind: 'client_sample', t: '', run_ms: 1000, window_ms: 1000, loop_delay_p99_ms: 12, loop_delay_max_ms: 40, loop_utilization: 0.25, in_flight: 3, rss_bytes: 1 });
  exported.onEvent({ kind: 'client_sample', t: '', run_ms: 1000, window_ms: 1000, loop_delay_p99_ms: 30, loop_delay_max_ms: 50, loop_utilization: 0.5, in_flight: 3, rss_bytes: 1, thread: 1 });
  const text = await scrape(url);
  assert.equal(exposed(text, 'roundload_requests_in_flight'), 3);
  assert.equal(exposed(text, 'roundload_requests_total{phase="main",status="ok",class=""}'), 2);
  assert.equal(exposed(text, 'roundload_requests_total{phase="main",status="hang",class="mid_stream"}'), 1);
  assert.equal(exposed(text, 'roundload_requests_total{phase="main",status="error",class="keepalive_race"}'), 1);
  assert.equal(exposed(text, 'roundload_errors_total{phase="main",class="keepalive_race"}'), 1);
  assert.equal(exposed(text, 'roundload_hangs_total{phase="main",hang_phase="mid_stream"}'), 1);
  assert.equal(exposed(text, 'roundload_conversations_total'), 1, 'round 1 starts a conversation, round 2 does not');
  assert.equal(exposed(text, 'roundload_output_tokens_total{phase="main"}'), 80, 'ok requests only');
  assert.equal(exposed(text, 'roundload_ttft_seconds_bucket{le="0.1",phase="main"}'), 1, 'an 80 ms TTFT is under 0.1 s');
  assert.equal(exposed(text, 'roundload_ttft_seconds_bucket{le="5",phase="main"}'), 2);
  assert.equal(exposed(text, 'roundload_ttft_seconds_sum{phase="main"}'), 3.08);
  assert.equal(exposed(text, 'roundload_itl_seconds_bucket{le="0.02",phase="main"}'), 1, 'a 15 ms mean gap');
  assert.equal(exposed(text, 'roundload_itl_seconds_bucket{le="0.15",phase="main"}'), 2, 'a 120 ms mean gap');
  assert.equal(exposed(text, 'roundload_itl_seconds_count{phase="main"}'), 2);
  assert.equal(exposed(text, 'roundload_e2e_seconds_count{phase="main"}'), 2, 'failed requests are not in the latency histograms');
  assert.equal(exposed(text, 'roundload_client_loop_delay_p99_seconds{thread="main"}'), 0.012);
  assert.equal(exposed(text, 'roundload_client_loop_delay_max_seconds{thread="1"}'), 0.05);
  assert.equal(exposed(text, 'roundload_client_loop_utilization_ratio{thread="main"}'), 0.25);
  assert.equal(exposed(text, 'roundload_run_info{run="20260101-000000-m",version="9.9.9",label_git_sha="abc123"}'), 1);
  assert.equal(exposed(text, 'roundload_run_status{status="running"}'), 1);
  assert.match(text, /workload="m"/, 'every series carries the workload name');
  for (const name of ['roundload_gauge_verdict', 'roundload_diagnosis', 'roundload_thresholds_ok']) assert.doesNotMatch(text, new RegExp(`^${name}`, 'm'), `${name}: no verdict before the end`);
  inFlight = 0;
  assert.equal(exposed(await scrape(url), 'roundload_requests_in_flight'), 0, 'the gauge is read at scrape time');
  const other = await fetch(url.replace('/metrics', '/'), { signal: AbortSignal.timeout(5000) });
  assert.equal(other.status, 404);
  await other.text();
});

test("at the run's end the verdicts become gauges: status, gauge verdicts, diagnosis, thresholds; with linger_s the endpoint serves them a bounded while, then closes", async (t) => {
  const logs: string[] = [];
  const exported = await startMetricsExport({ settings: { ...SETTINGS, linger_s: 1.5 }, workload: 'm', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: (l) => logs.push(l) });
  t.after(() => exported.close());
  const url = exported.url!;
  const started = performance.now();
  const finished = exported.finish(VERDICTS);
  // Scraped while it lingers.
  await new Promise((r) => setTimeout(r, 300));
  const text = await scrape(url);
  assert.equal(exposed(text, 'roundload_run_status{status="completed"}'), 1);
  assert.equal(exposed(text, 'roundload_run_status{status="running"}'), undefined, 'one status at a time');
  assert.equal(exposed(text, 'roundload_gauge_verdict{target="decode",gauge="sglang:num_running_reqs",series="worker=\\"d0\\"",verdict="pinned"}'), 1);
  assert.equal(exposed(text, 'roundload_gauge_verdict{target="router",gauge="sglang:num_queue_reqs",series="",verdict="rotating"}'), 1);
  assert.equal(exposed(text, 'roundload_diagnosis{verdict="engine"}'), 1);
  assert.equal(exposed(text, 'roundload_diagnosis_confidence'), 0.8);
  assert.equal(exposed(text, 'roundload_threshold_ok{threshold="hangs"}'), 0);
  assert.equal(exposed(text, 'roundload_threshold_ok{threshold="ok_requests"}'), 1);
  assert.equal(exposed(text, 'roundload_thresholds_ok'), 0);
  // The HELP lines list the values a verdict label takes, from the tables that declare them.
  const help = (name: string): string => text.match(new RegExp(`^# HELP ${name} (.*)$`, 'm'))?.[1] ?? '';
  for (const v of Object.keys(GAUGE_VERDICTS)) assert.match(help('roundload_gauge_verdict'), new RegExp(`\\b${v}\\b`));
  for (const v of Object.keys(DIAGNOSIS_VERDICTS)) assert.match(help('roundload_diagnosis'), new RegExp(`\\b${v}\\b`));
  assert.match(help('roundload_diagnosis'), /: none, proxy, .*, network or unknown$/);
  await finished;
  const waited = performance.now() - started;
  assert.ok(waited >= 1400 && waited < 4000, `lingered ${Math.round(waited)} ms`);
  assert.ok(logs.some((l) => /serving the final values for 1\.5 s more/.test(l)));
  await assert.rejects(fetch(url, { signal: AbortSignal.timeout(2000) }), 'closed after the linger');
});

test('a stop by signal cuts the linger short', async (t) => {
  const stop = new AbortController();
  const exported = await startMetricsExport({ settings: { ...SETTINGS, linger_s: 60 }, workload: 'm', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: () => {}, signal: stop.signal });
  t.after(() => exported.close());
  const started = performance.now();
  setTimeout(() => stop.abort(), 200);
  await exported.finish(VERDICTS);
  assert.ok(performance.now() - started < 2000);
});

/** A GET of /metrics with the Host header given, as a page of another site would send after DNS rebinding. */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, path: '/metrics', headers: { host }, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test('the metrics endpoint on loopback answers loopback Host names only (DNS rebinding gets 403); bound to a wildcard address it answers any', async (t) => {
  const exported = await startMetricsExport({ settings: SETTINGS, workload: 'm', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: () => {} });
  t.after(() => exported.close());
  const port = new URL(exported.url!).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST']) assert.equal(await statusWithHost(exported.url!, host), 200, host);
  for (const host of [`attacker.example:${port}`, 'attacker.example', `10.0.0.5:${port}`]) assert.equal(await statusWithHost(exported.url!, host), 403, host);
  assert.equal(hostAllowed(undefined, '127.0.0.1'), true, 'HTTP/1.0 without Host');
  assert.equal(hostAllowed('10.1.2.3:9464', '10.1.2.3'), true, 'the address it was bound to');
  assert.equal(hostAllowed('10.1.2.4:9464', '10.1.2.3'), false);
  assert.equal(hostAllowed('roundload-0.soak.svc:9464', '0.0.0.0'), true, 'a pod bound to 0.0.0.0: a Service name');
  assert.equal(hostAllowed('anything', '::'), true);
});

test('a metrics port in use fails the run start with ERR_SERVER_START', async (t) => {
  const first = await startMetricsExport({ settings: SETTINGS, workload: 'm', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: () => {} });
  t.after(() => first.close());
  const port = Number(new URL(first.url!).port);
  await assert.rejects(
    startMetricsExport({ settings: { ...SETTINGS, port }, workload: 'm', run: 'r', version: '1', labels: {}, inFlight: () => 0, log: () => {} }),
    (e: unknown) => (e as { code?: string }).code === 'ERR_SERVER_START',
  );
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
  const ok = exposed(text, 'roundload_requests_total{phase="main",status="ok",class=""}') ?? 0;
  assert.ok(ok >= 4 && ok < 18, `mid-run count ${ok}`);
  assert.ok((exposed(text, 'roundload_ttft_seconds_count{phase="main"}') ?? 0) >= 4);
  assert.ok(exposed(text, 'roundload_requests_in_flight') !== undefined);
  assert.match(text, /roundload_run_info\{run="run",version="[^"]+",workload="metrics-run"\} 1/);
  await assert.rejects(fetch(url, { signal: AbortSignal.timeout(2000) }), 'the endpoint is closed after the run');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DashboardState, MAX_LIVE_HANGS, MAX_LIVE_POINTS, parseDashboardAddress, startDashboard, type DashboardPlan } from '../../src/dashboard/index.js';
import { SseClient } from '../../src/dashboard/sse.js';
import { UsageError } from '../../src/errors.js';
import { runCommand } from '../../src/commands/run.js';
import type { HangEvent, RunEvent } from '../../src/types/index.js';
import { runCli, tempDir } from '../helpers/tmp.js';
import { gauge, hangRecord, record, scrape } from '../report/fixtures.js';

const PLAN: DashboardPlan = { name: 'smoke', target: 'http://127.0.0.1:1', plannedRequests: 40, plannedMs: null, pinAfterS: 30 };

function hang(runMs: number, agent = 1): HangEvent {
  return { kind: 'hang', t: '', run_ms: runMs, record: hangRecord({ agent, round: 3, run_ms: runMs - 1000, e2e_ms: 1000 }) };
}

test('a dashboard address is loopback unless a host is given, and a host beyond loopback needs --dashboard-expose', () => {
  assert.deepEqual(parseDashboardAddress('8080'), { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(parseDashboardAddress('0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseDashboardAddress('localhost:9000'), { host: 'localhost', port: 9000 });
  assert.deepEqual(parseDashboardAddress('127.0.0.2:9000'), { host: '127.0.0.2', port: 9000 });
  assert.deepEqual(parseDashboardAddress('[::1]:9000'), { host: '::1', port: 9000 });
  for (const bad of ['', 'x', '70000', 'host:', ':80', '1.2.3.4:80:1'])
    assert.throws(
      () => parseDashboardAddress(bad),
      (e: unknown) => e instanceof UsageError && /--dashboard takes \[host:\]port/.test(e.message),
      bad,
    );
  assert.throws(
    () => parseDashboardAddress('0.0.0.0:8080'),
    (e: unknown) => e instanceof UsageError && e.exitCode === 2 && /--dashboard-expose/.test(e.message),
  );
  assert.throws(() => parseDashboardAddress('[::]:8080'), /--dashboard-expose/);
  assert.deepEqual(parseDashboardAddress('0.0.0.0:8080', true), { host: '0.0.0.0', port: 8080 });
});

test('the dashboard counts tokens as they stream: live tok/s from client samples, TTFT at first tokens, streams in progress', () => {
  let now = 10_000;
  const s = new DashboardState(PLAN, () => now);
  const sample = (runMs: number, thread: number, tokens: number): RunEvent => ({
    kind: 'client_sample',
    t: '',
    run_ms: runMs,
    window_ms: 1000,
    loop_delay_p99_ms: 1,
    loop_delay_max_ms: 1,
    loop_utilization: 0.1,
    in_flight: 2,
    rss_bytes: 1,
    thread,
    streamed_tokens: tokens,
  });
  s.add({ kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 1, run_ms: 0 });
  s.add({ kind: 'request_start', agent: 1, conversation: 'a1-c1', round: 1, run_ms: 0 });
  s.add({ kind: 'first_token', agent: 0, round: 1, run_ms: 50, ttft_ms: 50 });
  s.add({ kind: 'first_token', agent: 1, round: 1, run_ms: 70, ttft_ms: 70 });
  s.add(sample(1000, 0, 300));
  s.add(sample(1000, 1, 200));
  now = 13_000;
  s.add(sample(3000, 0, 1100));
  s.add(sample(3000, 1, 1000));
  const live = s.snapshot().progress;
  // 1,600 more tokens in 2 s, no request ended.
  assert.equal(live.output_tokens_per_s, 800);
  assert.equal(live.streaming, 2);
  assert.ok(Math.abs(live.ttft_p50_ms! - 50) < 0.5, String(live.ttft_p50_ms));
  // Its record says 500 ms (on purpose): were it counted again, p99 would be 500.
  s.add({ kind: 'request', record: record({ agent: 0, round: 1, run_ms: 0, ttft_ms: 500, e2e_ms: 3000, completion_tokens: 1100 }) });
  const after = s.snapshot().progress;
  assert.equal(after.streaming, 1);
  assert.ok(Math.abs(after.ttft_p99_ms! - 70) < 0.5, String(after.ttft_p99_ms));
});

test("a hang's trace id is a link through tracing.trace_url; a template that is not http(s) makes no link", () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const event = (): HangEvent => ({ ...hang(1500), record: hangRecord({ trace_id: traceId }) });
  const linked = new DashboardState({ ...PLAN, traceUrl: 'https://tempo.example/explore?trace={trace_id}&x="<y>' }, () => 0).add(event());
  assert.equal(linked?.trace_id, traceId);
  assert.equal(linked?.trace_link, `https://tempo.example/explore?trace=${traceId}&x=%22%3Cy%3E`);
  const hostile = new DashboardState({ ...PLAN, traceUrl: 'javascript:alert(1)//{trace_id}' }, () => 0).add(event());
  assert.equal(hostile?.trace_id, traceId);
  assert.equal(hostile?.trace_link, null);
});

test("the dashboard state folds the run's events into progress figures, latency by round, throughput, gauges with verdicts and hangs", () => {
  let now = 10_000;
  const s = new DashboardState(PLAN, () => now);
  assert.equal(s.snapshot().status, 'starting');
  // The run's clock starts at 10 000 on this one: a request_start at run time 0, handled at once.
  s.add({ kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 1, run_ms: 0 });
  s.add({ kind: 'request_start', agent: 1, conversation: 'a1-c1', round: 1, run_ms: 0 });
  now = 11_500;
  s.add({ kind: 'request', record: record({ agent: 0, round: 1, run_ms: 0, ttft_ms: 40, e2e_ms: 1500, completion_tokens: 30 }) });
  s.add(scrape(1400, [gauge('sglang:num_running_reqs', 2), gauge('sglang:num_queue_reqs', 0), gauge('sglang:token_usage', 0.4), { ...gauge('sglang:num_requests_total', 5), type: 'counter' }]));
  const announced = s.add(hang(1500));
  assert.deepEqual(announced, {
    run_s: 1.5,
    agent: 1,
    conversation: 'a0-c1',
    round: 3,
    phase: 'mid_stream',
    deadline: 'stall_ms 500 ms',
    path: 'direct',
    connection_nth: 3,
    trace_id: null,
    trace_link: null,
  });
  now = 12_500;
  s.add({
    kind: 'request',
    record: record({ agent: 0, round: 2, run_ms: 1600, ttft_ms: 60, e2e_ms: 600, completion_tokens: 20, status: 'error', error: { class: 'connection_reset', message: 'x', phase: 'body' } as never }),
  });
  const snap = s.snapshot();
  assert.equal(snap.status, 'running');
  assert.equal(snap.elapsed_s, 2.5);
  assert.deepEqual(
    {
      done: snap.progress.done,
      planned: snap.progress.planned,
      ok: snap.progress.ok,
      errors: snap.progress.errors,
      hangs: snap.progress.hangs,
      in_flight: snap.progress.in_flight,
      oldest: snap.progress.oldest_in_flight_s,
    },
    { done: 2, planned: 40, ok: 1, errors: 1, hangs: 1, in_flight: 1, oldest: 2.5 },
  );
  assert.deepEqual(snap.progress.errors_by_class, { connection_reset: 1 });
  assert.equal(snap.progress.ttft_p50_ms !== null && Math.round(snap.progress.ttft_p50_ms), 40);
  assert.equal(snap.progress.output_tokens_per_s, 20, '50 tokens over the first 2.5 s (at least 1 s)');
  assert.equal(snap.hangs_total, 1);
  assert.deepEqual(
    snap.targets.map((t) => [t.target, t.ok, t.key]),
    [
      [
        'engine',
        true,
        [
          ['running', 2],
          ['queue', 0],
        ],
      ],
    ],
  );
  assert.ok(
    snap.targets[0]!.verdicts.some((v) => v.series === 'num_running_reqs' && v.verdict === 'insufficient'),
    JSON.stringify(snap.targets[0]!.verdicts),
  );
  const ids = snap.charts.map((c) => c.id);
  assert.deepEqual(ids, ['live-ttft', 'live-e2e', 'live-throughput', 'live-gauges-engine', 'live-gauges-engine-share']);
  const ttft = snap.charts[0]!;
  assert.deepEqual(ttft.x, [1, 2]);
  assert.deepEqual(
    ttft.series[0]!.values.map((v) => (v === null ? null : Math.round(v))),
    [40, null],
    'round 2 had no ok request',
  );
  const tput = snap.charts[2]!;
  assert.deepEqual(tput.x, [1, 2], 'the bucket still filling (2–3 s) is left out while the run goes on');
  assert.deepEqual(tput.markers, [{ x: 1.5, label: 'hang a1 r3' }]);
  const [key, other] = [snap.charts[3]!, snap.charts[4]!];
  assert.deepEqual(
    key.series.map((x) => x.label),
    ['num_running_reqs · insufficient', 'num_queue_reqs · insufficient'],
  );
  assert.deepEqual(
    other.series.map((x) => x.label),
    ['token_usage · insufficient'],
    'counters are not drawn',
  );
  // The end: the run's clock stops at run_end, and the last bucket is drawn as partial.
  now = 13_200;
  s.add({ kind: 'run_end', t: '', run_ms: 2700, status: 'completed', reason: null });
  now = 60_000;
  const end = s.snapshot();
  assert.equal(end.status, 'finished');
  assert.equal(end.elapsed_s, 2.7);
  assert.deepEqual(end.charts.find((c) => c.id === 'live-throughput')!.partial, { from_x: 2, to_x: 2.7, covered_s: 0.7, window_s: 1 });
});

test('an open-loop run shows its conversations on the dashboard: started, delayed, active now, start lag, and an arrivals chart', () => {
  let now = 0;
  const s = new DashboardState({ ...PLAN, plannedRequests: null }, () => now);
  const start = (runMs: number, lagMs: number, delayed: boolean, n: number): RunEvent => ({
    kind: 'conversation_start',
    t: '',
    run_ms: runMs,
    scheduled_ms: runMs - lagMs,
    start_lag_ms: lagMs,
    delayed,
    phase: 'main',
    agent: n,
    conversation: `a${n}-c1`,
  });
  s.add(start(100, 1, false, 0));
  s.add(start(400, 2, false, 1));
  s.add(start(1300, 900, true, 2));
  now = 2500;
  s.add({ kind: 'conversation_end', t: '', run_ms: 2400, agent: 0, conversation: 'a0-c1', requests: 4 });
  const snap = s.snapshot();
  assert.deepEqual({ ...snap.arrivals, start_lag_p50_ms: undefined, start_lag_p99_ms: undefined }, { started: 3, delayed: 1, active: 2, start_lag_p50_ms: undefined, start_lag_p99_ms: undefined });
  assert.ok(Math.abs(snap.arrivals!.start_lag_p99_ms - 900) <= 9, `${snap.arrivals!.start_lag_p99_ms}`);
  assert.ok(snap.arrivals!.start_lag_p50_ms <= 2.01, `${snap.arrivals!.start_lag_p50_ms}`);
  const chart = snap.charts.find((c) => c.id === 'live-arrivals')!;
  assert.deepEqual(chart.x, [1, 2, 3]);
  assert.deepEqual(
    chart.series.map((x) => [x.label, x.values]),
    [
      ['started/s', [2, 1, 0]],
      ['active', [2, 3, 2]],
      ['start lag max ms', [2, 900, null]],
    ],
  );
  // A closed-loop run announces no conversation starts: no card, no chart (an end alone changes nothing).
  const closed = new DashboardState(PLAN, () => 0);
  closed.add({ kind: 'conversation_end', t: '', run_ms: 10, agent: 0, conversation: 'a0-c1', requests: 1 });
  assert.equal(closed.snapshot().arrivals, null);
  assert.equal(
    closed.snapshot().charts.find((c) => c.id === 'live-arrivals'),
    undefined,
  );
});

test('the dashboard state stays bounded over a long run: series coarsen past their point budget, the hang list keeps the latest', () => {
  let now = 0;
  const s = new DashboardState({ ...PLAN, plannedRequests: null, plannedMs: 8 * 3600_000 }, () => now);
  const hours = 8;
  for (let sec = 0; sec < hours * 3600; sec += 5) {
    now = sec * 1000;
    s.add({ kind: 'request', record: record({ run_ms: now - 500, e2e_ms: 500, round: 1 + (sec % 7) }) });
    s.add(scrape(now, [gauge('sglang:num_running_reqs', sec % 3)]));
    if (sec % 60 === 0) s.add(hang(now));
  }
  const snap = s.snapshot();
  for (const c of snap.charts) assert.ok(c.x.length <= MAX_LIVE_POINTS, `${c.id}: ${c.x.length} points`);
  assert.equal(snap.hangs.length, MAX_LIVE_HANGS);
  assert.equal(snap.hangs_total, (hours * 3600) / 60);
  assert.equal(snap.hangs.at(-1)!.run_s, hours * 3600 - 60, 'the latest hang is kept');
  assert.ok(JSON.stringify(snap).length < 200_000, `a snapshot stays small: ${JSON.stringify(snap).length} bytes`);
  assert.equal(snap.remaining_s, 5);
});

/** A response whose socket buffer is full until `drain` is emitted. */
class StuckSink extends EventEmitter {
  written: string[] = [];
  full = false;
  write(chunk: string): boolean {
    this.written.push(chunk);
    return !this.full;
  }
  end(): void {
    this.emit('close');
  }
}

test('a page that does not keep up never holds the run: its queue drops the oldest messages and says how many', () => {
  const sink = new StuckSink();
  const client = new SseClient(sink, 3);
  client.send('a');
  assert.deepEqual(sink.written, ['a'], 'written at once while the socket takes it');
  sink.full = true;
  client.send('b');
  assert.deepEqual(sink.written, ['a', 'b'], 'b filled the buffer');
  for (const m of ['c', 'd', 'e', 'f', 'g']) client.send(m);
  assert.deepEqual(sink.written, ['a', 'b'], 'nothing more is written until the socket drains');
  assert.equal(client.dropped, 2, 'c and d dropped: only the newest 3 wait');
  sink.full = false;
  sink.emit('drain');
  assert.deepEqual(sink.written, ['a', 'b', 'event: dropped\ndata: {"dropped":2}\n\n', 'e', 'f', 'g']);
  sink.emit('close');
  client.send('h');
  assert.equal(sink.written.length, 6, 'a gone page gets nothing more');
});

/** Reads server-sent events from `url` until `until` says stop (bounded). */
async function readEvents(url: string, until: (events: { event: string; data: unknown }[]) => boolean, timeoutMs = 10_000): Promise<{ event: string; data: unknown }[]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const events: { event: string; data: unknown }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) as unknown });
    }
    if (until(events)) break;
  }
  return events;
}

test('the server streams snapshots and hangs as server-sent events, serves report.html once the run is over, and then closes even with a page that never reads', async (t) => {
  const dir = tempDir(t);
  const report = join(dir, 'report.html');
  writeFileSync(report, '<!doctype html><title>the report</title>');
  const dashboard = await startDashboard({ host: '127.0.0.1', port: 0, plan: PLAN, tickMs: 50, lingerMs: 500, assets: { js: '/* uplot */', css: '' } });
  t.after(() => dashboard.close());
  const page = await fetch(dashboard.url);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /connect-src 'self'/, 'the page may reach its own event stream, nothing else');
  assert.match(html, /new EventSource\('\/events'\)/);
  assert.equal((await fetch(`${dashboard.url}report.html`)).status, 404, 'no report before the end');
  // A page that connects and never reads: it must not hold anything up.
  const stuck = connect(Number(new URL(dashboard.url).port), '127.0.0.1');
  stuck.write('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
  stuck.pause();
  t.after(() => stuck.destroy());

  const events = readEvents(`${dashboard.url}events`, (es) => es.some((e) => e.event === 'hang') && es.filter((e) => e.event === 'snapshot').length >= 3);
  const feed: RunEvent[] = [
    { kind: 'request_start', agent: 0, conversation: 'a0-c1', round: 1, run_ms: 0 },
    { kind: 'request', record: record({ run_ms: 0, e2e_ms: 10 }) },
  ];
  for (const e of feed) dashboard.onEvent(e);
  // The hang goes out as soon as a page is connected to see it.
  await new Promise((r) => setTimeout(r, 100));
  dashboard.onEvent(hang(50));
  const got = await events;
  const snapshots = got.filter((e) => e.event === 'snapshot').map((e) => e.data as { progress: { done: number } });
  assert.equal(snapshots[0]!.progress.done, 1, 'the state at once on connecting');
  assert.deepEqual((got.find((e) => e.event === 'hang')!.data as { agent: number }).agent, 1);

  // The end: a page still connected is told where the report is; the report is served; then the server closes.
  const ending = readEvents(`${dashboard.url}events`, (es) => es.some((e) => e.event === 'end'));
  await new Promise((r) => setTimeout(r, 100));
  dashboard.onEvent({ kind: 'run_end', t: '', run_ms: 100, status: 'completed', reason: null });
  const finished = dashboard.finish({ path: report, status: 'completed' });
  const ended = await ending;
  assert.deepEqual(ended.at(-1), { event: 'end', data: { status: 'completed', report: '/report.html' } });
  assert.equal((ended.at(-2)!.data as { status: string }).status, 'finished');
  const served = await fetch(`${dashboard.url}report.html`);
  assert.equal(await served.text(), '<!doctype html><title>the report</title>');
  // The reading pages loaded the report, the stuck one never will: the linger (500 ms) bounds the wait.
  await finished;
  await assert.rejects(fetch(dashboard.url, { signal: AbortSignal.timeout(5000) }));
});

test('roundload run --dashboard: refuses a host beyond loopback before anything starts (exit 2), and serves the dashboard for a run on 127.0.0.1, closing with it', async (t) => {
  const never = join(tempDir(t), 'never');
  await assert.rejects(
    runCommand('workloads/smoke.yaml', { dashboard: '0.0.0.0:0', out: never, label: [], set: [] }, []),
    (e: unknown) => e instanceof UsageError && e.exitCode === 2 && /^--dashboard 0\.0\.0\.0:0 would listen on 0\.0\.0\.0, beyond this machine/.test(e.message),
  );
  assert.equal(existsSync(never), false, 'nothing started');
  const out = join(tempDir(t), 'run');
  const ran = await runCli(['run', 'workloads/smoke.yaml', '--agents', '2', '--rounds', '2', '--dashboard', '0', '--out', out], { timeoutMs: 60_000 });
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stderr, /roundload: live dashboard on http:\/\/127\.0\.0\.1:\d+\/ \(it becomes report\.html when the run ends\)/);
});

/** A GET with the Host header given, as a page of another site would send after DNS rebinding. */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, path: '/', headers: { host }, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test('the live dashboard answers loopback Host names only: a rebound name of another site gets 403 (DNS rebinding)', async (t) => {
  const dashboard = await startDashboard({ host: '127.0.0.1', port: 0, plan: PLAN, tickMs: 50, lingerMs: 500, assets: { js: '', css: '' } });
  t.after(() => dashboard.close());
  const port = new URL(dashboard.url).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST']) assert.equal(await getWithHost(dashboard.url, host), 200, host);
  for (const host of [`attacker.example:${port}`, 'attacker.example', `10.0.0.5:${port}`]) assert.equal(await getWithHost(dashboard.url, host), 403, host);
});

test('the live gauge charts name each series in full, telling apart two that differ by one label, one axis per unit (requests, shares 0–1, tokens, tokens/s)', () => {
  const now = 10_000;
  const s = new DashboardState(PLAN, () => now);
  const pd = { engine_type: 'decode', moe_ep_rank: '0', pp_rank: '0', tp_rank: '0', model_name: 'deepseek-v4-flash' };
  const router = (port: number) => ({ worker: `http://127.0.0.1:${port}`, model_name: 'deepseek-v4-flash' });
  for (const ms of [500, 1500]) {
    s.add(
      scrape(ms, [
        gauge('sglang:num_running_reqs', 20, pd),
        gauge('sglang:num_decode_prealloc_queue_reqs', 13, pd),
        gauge('sglang:num_used_tokens', 39_327, pd),
        gauge('sglang:token_usage', 0.0375, pd),
        gauge('sglang:cache_hit_rate', 0.89, pd),
        gauge('sglang:gen_throughput', 1026.8, pd),
      ]),
    );
    s.add(scrape(ms, [gauge('sgl_router_running_requests', 39, router(37951)), gauge('sgl_router_running_requests', 38, router(40041))], { target: 'router' }));
  }
  const snap = s.snapshot();
  const charts = Object.fromEntries(snap.charts.filter((c) => c.id.startsWith('live-gauges-')).map((c) => [c.id, c]));
  assert.deepEqual(Object.keys(charts), ['live-gauges-engine', 'live-gauges-engine-share', 'live-gauges-engine-tokens', 'live-gauges-engine-tokens-per-s', 'live-gauges-router']);
  const labels = (id: string) => charts[id]!.series.map((x) => x.label.replace(/ · .*$/, ''));
  assert.deepEqual(labels('live-gauges-engine'), ['num_running_reqs', 'num_decode_prealloc_queue_reqs']);
  assert.deepEqual(labels('live-gauges-engine-share'), ['token_usage', 'cache_hit_rate']);
  assert.deepEqual(labels('live-gauges-engine-tokens'), ['num_used_tokens']);
  assert.equal(charts['live-gauges-engine-tokens']!.y_label, 'tokens');
  assert.deepEqual(labels('live-gauges-router'), ['sgl_router_running_requests{worker="http://127.0.0.1:37951"}', 'sgl_router_running_requests{worker="http://127.0.0.1:40041"}']);
  // The labels all of a target's series share are said once.
  assert.match(charts['live-gauges-engine']!.note ?? '', /engine_type="decode",model_name="deepseek-v4-flash",moe_ep_rank="0"/);
  const cards = Object.fromEntries(snap.targets.map((t) => [t.target, t]));
  assert.equal(cards.router!.common_labels, 'model_name="deepseek-v4-flash"');
});

// roundload's own metrics in a real Prometheus (Debian's `prometheus`, installed by .ci/run): scraped from
// `--metrics-port` while a run goes and during its `--metrics-linger`, and pushed by `--remote-write` to
// Prometheus' own receiver every interval while it goes and at its end; both read back through the HTTP API and
// checked against the run's summary.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Summary } from '../../src/analysis/index.js';
import { freePort, Proc, requireTool } from '../helpers/procs.js';
import { runCli, tempDir } from '../helpers/tmp.js';
import { dashboardQueries } from '../export/wire.js';

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query through Prometheus' HTTP API. */
async function query(base: string, promql: string): Promise<Sample[]> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { status: string; data?: { result: Sample[] }; error?: string };
  assert.equal(body.status, 'success', `${promql}: ${body.error ?? ''}`);
  return body.data!.result;
}

/** The one value of a query, as a number (undefined when it returned no series). */
async function one(base: string, promql: string): Promise<number | undefined> {
  const result = await query(base, promql);
  assert.ok(result.length <= 1, `${promql}: ${result.length} series`);
  return result[0] === undefined ? undefined : Number(result[0].value[1]);
}

/** Starts Prometheus (its own process group, stopped when the test ends) and waits until it is ready. */
async function startPrometheus(t: Parameters<typeof tempDir>[0], bin: string, scrapePort: number): Promise<string> {
  const dir = tempDir(t, 'roundload-prometheus-');
  const port = await freePort();
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', 'scrape_configs:', '  - job_name: roundload-scrape', '    static_configs:', `      - targets: ['127.0.0.1:${scrapePort}']`, ''].join(
      '\n',
    ),
  );
  const child = spawn(
    bin,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--web.enable-remote-write-receiver', '--log.level=warn'],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const proc = new Proc(child);
  t.after(() => proc.stop());
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i += 1) {
    if (proc.exited) assert.fail(`prometheus exited: ${proc.stderr}`);
    const ready = await fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    await sleep(100);
  }
  // Ready is not scraping: Prometheus hands its targets to the scrape loop a few seconds after start (its
  // discovery manager batches updates), so wait for the first scrape of the port, down as it still is; the
  // run then has every second of its exposure scraped.
  for (let i = 0; i < 300; i += 1) {
    if (proc.exited) assert.fail(`prometheus exited: ${proc.stderr}`);
    const targets = await fetch(`${base}/api/v1/targets`, { signal: AbortSignal.timeout(1000) }).then(
      async (r) => ((await r.json()) as { data: { activeTargets: { lastScrape: string }[] } }).data.activeTargets,
      () => [],
    );
    if (targets.some((x) => !x.lastScrape.startsWith('0001-'))) return base;
    await sleep(100);
  }
  assert.fail(`prometheus did not scrape 127.0.0.1:${scrapePort} within 30 s: ${proc.stderr}`);
}

test('a real Prometheus scrapes --metrics-port during the run and its linger, and receives --remote-write during the run and at its end: both hold the counts of summary.json', async (t) => {
  const bin = requireTool(t, 'prometheus', 'apt-get install prometheus');
  if (bin === null) return;
  const metricsPort = await freePort();
  const prometheus = await startPrometheus(t, bin, metricsPort);
  const out = join(tempDir(t), 'run');
  let ended = false;
  const running = runCli(
    [
      'run',
      'workloads/smoke.yaml',
      '--agents',
      '2',
      '--duration',
      '8s',
      '--metrics-port',
      String(metricsPort),
      '--metrics-linger',
      '3s',
      '--remote-write',
      `${prometheus}/api/v1/write`,
      '--set',
      'client_metrics.remote_write_interval_s=1',
      '--label',
      'night=7',
      '--out',
      out,
      '--quiet',
    ],
    { timeoutMs: 90_000 },
  ).finally(() => {
    ended = true;
  });
  // Pushed while the run goes: Prometheus holds pushed samples before the process ends.
  let seenDuringRun = 0;
  while (!ended) {
    const n = await one(prometheus, 'count_over_time(roundload_requests_in_flight{job="roundload"}[5m])').catch(() => undefined);
    if (!ended && n !== undefined) seenDuringRun = Math.max(seenDuringRun, n);
    await sleep(250);
  }
  const ran = await running;
  assert.equal(ran.code, 0, ran.stderr);
  assert.ok(seenDuringRun >= 2, `pushed samples in Prometheus while the run went: ${seenDuringRun}`);
  const line = /remote write: (\d+) pushes, (\d+) samples of \d+ series \(\d+ bytes\) sent to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/write\n/.exec(ran.stderr);
  assert.ok(line !== null, ran.stderr);
  assert.ok(Number(line[1]) >= 5, `${line[1]} pushes over an 8 s run at 1 s`);
  assert.doesNotMatch(ran.stderr, /warning: remote write/);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.ok(summary.totals.ok > 0);

  // Pushed: the samples at the end time are current, so an instant query reads them.
  const pushed = '{job="roundload",workload="smoke"}';
  assert.equal(await one(prometheus, `sum(roundload_requests_total${pushed})`), summary.totals.requests);
  assert.equal(await one(prometheus, `sum(roundload_requests_total{job="roundload",status="ok"})`), summary.totals.ok);
  assert.equal(await one(prometheus, `sum(roundload_ttft_seconds_count${pushed})`), summary.totals.ok);
  assert.equal(await one(prometheus, `sum(roundload_output_tokens_total${pushed})`), summary.totals.completion_tokens);
  const p99 = await one(prometheus, `histogram_quantile(0.99, sum by (le) (roundload_ttft_seconds_bucket${pushed}))`);
  assert.ok(p99 !== undefined && p99 > 0 && p99 <= 0.5, `TTFT p99 from the pushed buckets: ${p99}`);
  assert.equal(await one(prometheus, `roundload_run_status{job="roundload",status="completed"}`), 1);
  assert.equal(await one(prometheus, `roundload_diagnosis{job="roundload",verdict="${summary.diagnosis.verdict}"}`), 1);
  assert.equal(await one(prometheus, `roundload_thresholds_ok{job="roundload"}`), summary.thresholds.ok ? 1 : 0);
  assert.equal((await query(prometheus, 'roundload_gauge_verdict{job="roundload"}')).length, summary.gauges.length);
  const [info] = await query(prometheus, 'roundload_run_info{job="roundload"}');
  assert.equal(info?.metric.run, 'run');
  assert.equal(info.metric.label_night, '7');
  assert.ok((await one(prometheus, 'count_over_time(roundload_requests_in_flight{job="roundload"}[5m])'))! >= 6, 'a snapshot a second');
  // Every sample sent is in Prometheus, once (a range selector returns the raw samples of each series).
  const raw = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent('{job="roundload"}[10m]')}`, { signal: AbortSignal.timeout(5000) });
  const matrix = ((await raw.json()) as { data: { result: { values: unknown[] }[] } }).data.result;
  assert.equal(
    matrix.reduce((n, s) => n + s.values.length, 0),
    Number(line[2]),
    'Prometheus holds every sample sent, once',
  );

  // Scraped: the target is gone (its series are stale now), so read the last values over the last minute.
  const scraped = '{job="roundload-scrape",workload="smoke"}';
  assert.equal(await one(prometheus, `sum(max_over_time(roundload_requests_total${scraped}[1m]))`), summary.totals.requests, 'a scrape during the linger saw the final counts');
  assert.equal(await one(prometheus, `max_over_time(roundload_thresholds_ok${scraped}[1m])`), summary.thresholds.ok ? 1 : 0, 'and the verdicts');
  assert.ok((await one(prometheus, `count_over_time(roundload_requests_in_flight${scraped}[1m])`))! >= 3, 'scraped during the run and the linger');
  assert.ok((await one(prometheus, `max_over_time(roundload_client_loop_delay_p99_seconds{job="roundload-scrape",thread="main"}[1m])`)) !== undefined, 'the client loop delay');

  // The Grafana dashboard's queries, its variables filled in as Grafana would: valid PromQL, and each finds
  // series but those of errors and hangs, of which this run had none.
  const dashboard = JSON.parse(readFileSync('docs/grafana/roundload.json', 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
  const empty: string[] = [];
  for (const expr of dashboardQueries(dashboard)) {
    const promql = expr.replaceAll('$workload', 'smoke').replaceAll('$job', '.*').replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m');
    if ((await query(prometheus, promql)).length === 0) empty.push(promql);
  }
  assert.deepEqual(
    empty.map((q) => /roundload_[a-z_]+/.exec(q)?.[0]),
    ['roundload_errors_total', 'roundload_hangs_total'],
    empty.join('\n'),
  );
});

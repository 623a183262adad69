import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMetricsExport } from '../../src/export/index.js';
import { hangRecord, plainRecord } from '../report/fixtures.js';
import { VERDICTS, dashboardQueries } from './wire.js';

/** Every metric family a run exports (the end-of-run ones included), read from a real scrape of the endpoint
 * while it lingers: the scrape waits for the linger to start (its log line), and the linger ends when the test
 * aborts it, so no step waits for time (a loaded machine once met the close of a 0.5 s linger). */
async function exportedFamilies(): Promise<Map<string, string>> {
  let lingerStarted = (): void => {};
  const lingering = new Promise<void>((resolve) => (lingerStarted = resolve));
  const stop = new AbortController();
  const exported = await startMetricsExport({
    settings: { port: 0, host: '127.0.0.1', linger_s: 600, remote_write_url: null, remote_write_timeout_s: 10, remote_write_interval_s: 10 },
    workload: 'w',
    run: 'r',
    version: '1',
    labels: {},
    inFlight: () => 0,
    log: (line) => {
      if (line.includes('(linger_s)')) lingerStarted();
    },
    signal: stop.signal,
  });
  try {
    exported.onEvent({ kind: 'request', record: plainRecord({}) });
    exported.onEvent({ kind: 'request', record: plainRecord({ status: 'error', error: { class: 'http_5xx', message: '', code: null } }) });
    exported.onEvent({ kind: 'hang', t: '', run_ms: 0, record: hangRecord() });
    exported.onEvent({ kind: 'client_sample', t: '', run_ms: 0, window_ms: 1000, loop_delay_p99_ms: 1, loop_delay_max_ms: 1, loop_utilization: 0.1, in_flight: 0, rss_bytes: 1 });
    const finished = exported.finish(VERDICTS);
    // Bounded: a finish that ends without lingering fails here instead of waiting.
    await Promise.race([lingering, finished.then(() => Promise.reject(new Error('the export closed without lingering')))]);
    const text = await (await fetch(exported.url!, { signal: AbortSignal.timeout(30_000) })).text();
    stop.abort();
    await finished;
    return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  } finally {
    stop.abort();
    await exported.close();
  }
}

test('the Grafana dashboard parses, every panel has a query, and every metric its queries use is one roundload exports', async () => {
  const families = await exportedFamilies();
  const names = new Set<string>();
  for (const [name, type] of families) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  const dashboard = JSON.parse(readFileSync('docs/grafana/roundload.json', 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  assert.ok(dashboard.panels.length >= 10);
  for (const panel of dashboard.panels) assert.ok((panel.targets ?? []).length > 0, `${panel.title}: no query`);
  const queries = dashboardQueries(dashboard);
  const used = new Set(queries.flatMap((q) => [...q.matchAll(/\broundload_[a-z0-9_]+/g)].map((m) => m[0])));
  for (const name of used) assert.ok(names.has(name), `the dashboard queries ${name}, which roundload does not export`);
  for (const family of [
    'roundload_requests_total',
    'roundload_ttft_seconds',
    'roundload_itl_seconds',
    'roundload_e2e_seconds',
    'roundload_hangs_total',
    'roundload_requests_in_flight',
    'roundload_client_loop_delay_p99_seconds',
    'roundload_gauge_verdict',
    'roundload_diagnosis',
  ]) {
    assert.ok(
      [...used].some((u) => u === family || u.startsWith(`${family}_`)),
      `the dashboard shows ${family}`,
    );
  }
});

test('docs/metrics.md documents every metric roundload exports', async () => {
  const doc = readFileSync('docs/metrics.md', 'utf8');
  for (const name of (await exportedFamilies()).keys()) assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/metrics.md`);
});

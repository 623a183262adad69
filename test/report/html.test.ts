import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { rebuildSummary } from '../../src/results/index.js';
import { collectReportData, jsonForScript, renderReportHtml, ReportCollector, scriptSafe, type ReportData } from '../../src/report/index.js';
import { tempDir } from '../helpers/tmp.js';
import { gauge, hangRecord, record, scrape, writeFolder } from './fixtures.js';

async function dataFor(dir: string): Promise<ReportData> {
  const r = await rebuildSummary(dir);
  return collectReportData(dir, r.summary, { notes: r.notes });
}

function embedded(html: string): { charts: { id: string }[]; summary: { run: { name: string; labels: Record<string, string> } } } {
  const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(m, 'the data script element is there');
  return JSON.parse(m[1]!) as ReturnType<typeof embedded>;
}

function busyFolder(dir: string): string {
  const records = [1, 2, 3, 4].flatMap((round) =>
    [0, 1].map((agent) =>
      record({ agent, conversation: `a${agent}-c1`, round, run_ms: round * 1000 + agent * 100, ttft_ms: 10 * round, t: new Date(Date.parse('2026-01-01T00:00:00Z') + round * 1000).toISOString() }),
    ),
  );
  const hang = hangRecord({ agent: 1, conversation: 'a1-c1', round: 5, run_ms: 5000, e2e_ms: 1500, request_id: 'rl-<b>-a1-c1-r5-9' });
  return writeFolder(dir, {
    status: 'completed',
    endedAt: '2026-01-01T00:00:08.000Z',
    records: [...records, hang],
    events: [
      { kind: 'run_start', t: '2026-01-01T00:00:00.000Z', target: 'http://127.0.0.1:1', path: 'direct', agents: 2, rounds: 5 },
      {
        kind: 'hang',
        t: '2026-01-01T00:00:06.500Z',
        run_ms: 6500,
        record: hang,
        gauges: [
          {
            target: 'engine',
            run_ms: 6300,
            age_ms: 200,
            last_error: null,
            samples: [
              { ...gauge('sglang:num_prefill_inflight_queue_reqs', 1, { model_name: 'm' }), type: 'gauge' },
              { ...gauge('sglang:num_requests_total', 40), type: 'counter' },
            ],
          },
        ],
      },
      ...[0, 1, 2, 3].flatMap((i) => [
        {
          kind: 'canary',
          t: '2026-01-01T00:00:01.000Z',
          run_ms: i * 2000,
          leg: 'proxied',
          path: 'hop',
          url: 'u',
          ok: i !== 3,
          status: i === 3 ? 'hang' : 'ok',
          latency_ms: 40 + i,
          ttft_ms: 10,
          http_status: 200,
          error_class: null,
          hang_phase: i === 3 ? 'first_token' : null,
          connection_nth: 1,
        },
        {
          kind: 'canary',
          t: '2026-01-01T00:00:01.000Z',
          run_ms: i * 2000 + 5,
          leg: 'direct',
          path: 'direct',
          url: 'u',
          ok: true,
          status: 'ok',
          latency_ms: 20 + i,
          ttft_ms: 5,
          http_status: 200,
          error_class: null,
          hang_phase: null,
          connection_nth: 1,
        },
      ]),
      { kind: 'probe', t: '2026-01-01T00:00:06.600Z', run_ms: 6600, name: 'journal', on: 'hang', exit_code: 0, output: 'watchdog: <no> stuck & fine' },
      ...[1, 2, 3, 4, 5, 6, 7].map((s) => ({
        kind: 'client_sample',
        t: '2026-01-01T00:00:01.000Z',
        run_ms: s * 1000,
        window_ms: 1000,
        loop_delay_p99_ms: 3,
        loop_delay_max_ms: 4,
        loop_utilization: 0.1,
        in_flight: 2,
        rss_bytes: 1,
      })),
      { kind: 'run_end', t: '2026-01-01T00:00:08.000Z', run_ms: 8000, status: 'completed', reason: null },
    ],
    scrapes: [0, 1, 2, 3, 4, 5, 6, 7].map((s) => scrape(s * 1000, [gauge('sglang:num_running_reqs', s % 3), gauge('sglang:num_prefill_inflight_queue_reqs', s === 4 ? 0 : 1)])),
  });
}

test('the page is self-contained: the chart library and data inline, a CSP allowing no requests, no external reference', async (t) => {
  const dir = busyFolder(join(tempDir(t), 'run'));
  const html = renderReportHtml(await dataFor(dir));
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">/);
  assert.match(html, /var uPlot=function\(\)/, 'uPlot is inlined');
  assert.doesNotMatch(html, /<link\b|<script[^>]+src=|<img[^>]+src="?http|@import|url\(\s*['"]?https?:/i, 'nothing is fetched');
  assert.equal(html.match(/<script\b/g)?.length, 3);
  assert.equal(html.match(/<\/script>/g)?.length, 3);
});

test('every chart in the data has its data-chart element, and the sections carry hangs, gauges, events and settings', async (t) => {
  const dir = busyFolder(join(tempDir(t), 'run'));
  const data = await dataFor(dir);
  const html = renderReportHtml(data);
  const ids = embedded(html).charts.map((c) => c.id);
  assert.deepEqual(
    ids.filter((id) => !id.startsWith('gauge-')),
    ['latency-ttft', 'latency-itl', 'latency-e2e', 'throughput', 'latency-over-time', 'canaries', 'client-loop', 'in-flight'],
  );
  assert.deepEqual(ids.filter((id) => id.startsWith('gauge-')).sort(), ['gauge-engine-sglang_num_prefill_inflight_queue_reqs', 'gauge-engine-sglang_num_running_reqs']);
  // What the gauges read at the hang (gauges only, counters left out), under the hang's row.
  assert.match(html, /<tr class="evidence-row"><td colspan="15">gauges at the hang: engine \(0\.2 s old\): num_prefill_inflight_queue_reqs 1<\/td><\/tr>/);
  // Canaries per leg, and their chart: a line per leg, the hung proxied canary a dot of its own.
  assert.deepEqual(
    data.canaries.map((c) => [c.leg, c.total, c.ok, c.failures]),
    [
      ['proxied', 4, 3, { 'hang first_token': 1 }],
      ['direct', 4, 4, {}],
    ],
  );
  const canary = data.charts.canaries[0]!;
  assert.deepEqual(
    canary.series.map((x) => x.label),
    ['proxied ms', 'direct ms', 'proxied failed (ms to the failure)'],
  );
  assert.deepEqual(
    canary.series.map((x) => x.values.filter((v) => v !== null).length),
    [3, 4, 1],
  );
  assert.match(html, /<td>proxied<\/td><td class="num">4<\/td><td class="num">3<\/td><td class="num"><b class="bad-text">1<\/b><\/td>/);
  for (const id of ids) assert.equal(html.split(`data-chart="${id}"`).length - 1, 1, `one element for ${id}`);
  // The hang table: agent, conversation, round, phase, socket, nth, idle, path.
  const hangRow =
    /<tr class="hang-row"><td><span class="time">2026-01-01 00:00:06Z<\/span><\/td><td class="num">6\.5<\/td><td class="num">1<\/td><td>a1-c1<\/td><td class="num">5<\/td><td><code>rl-&lt;b&gt;-a1-c1-r5-9<\/code><\/td><td>–<\/td><td><span class="badge bad">mid_stream<\/span><\/td><td>stall_ms 500<\/td><td class="num">500<\/td><td>c2<\/td><td class="num">3<\/td><td class="num">110<\/td><td>direct<\/td>/;
  assert.match(html, hangRow);
  assert.match(html, /Hangs <span class="count">1<\/span>/);
  assert.match(html, /probe/);
  assert.match(html, /watchdog: &lt;no&gt; stuck &amp; fine/, 'event text is escaped');
  assert.match(html, /<span class="chip">arm=a<\/span>/);
  assert.match(html, /Workload as resolved/);
  assert.match(html, /agents × rounds<\/dt><dd>2 × 3/);
  assert.match(html, /<code>hangs<\/code><\/td><td class="num">0\.000<\/td><td class="num">1\.000<\/td><td><span class="badge bad">fail<\/span>/, 'the default hangs threshold fails');
  assert.ok(
    data.charts.gauges.every((c) => c.markers.some((m) => m.x === 6.5)),
    'hang markers at the time the watchdog fired',
  );
});

test("`roundload report` gathers the page's data in the rebuild's own pass over the files: the same data as reading them again, skipped lines noted once", async (t) => {
  const dir = busyFolder(join(tempDir(t), 'run'));
  appendFileSync(join(dir, 'events.jsonl'), '{"kind":"canary","t":"2026-01-01T00:00:0');
  appendFileSync(join(dir, 'gauges.jsonl'), 'not json\n');
  const now = new Date('2026-01-02T00:00:00Z');
  const collector = new ReportCollector();
  const rebuilt = await rebuildSummary(dir, collector);
  const onePass = collector.data(rebuilt.summary, rebuilt.manifest, [...rebuilt.notes], now);
  const reread = await collectReportData(dir, rebuilt.summary, { notes: rebuilt.notes, now });
  assert.deepEqual(onePass, reread);
  assert.ok(onePass.hangs.length === 1 && onePass.canaries.length > 0 && onePass.targets.length > 0 && onePass.charts.gauges.length > 0, 'the folder has what each part gathers');
  assert.equal(onePass.notes.filter((n) => n.includes('events.jsonl')).length, 1, onePass.notes.join('\n'));
  assert.equal(onePass.notes.filter((n) => n.includes('gauges.jsonl')).length, 1, onePass.notes.join('\n'));
});

test("a hang's trace id is shown in its row, a link only through an http(s) trace_url, escaped", async (t) => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const hang = hangRecord({ agent: 1, conversation: 'a1-c1', round: 2, run_ms: 1000, e2e_ms: 500, trace_id: traceId });
  const dir = writeFolder(join(tempDir(t), 'run'), {
    status: 'completed',
    records: [record({ round: 1 }), hang],
    events: [{ kind: 'hang', t: '2026-01-01T00:00:01.500Z', run_ms: 1500, record: hang }],
  });
  const data = await dataFor(dir);
  assert.equal(data.hangs[0]?.trace_id, traceId);
  // No template: the id as text.
  assert.match(renderReportHtml(data), new RegExp(`<td><code>${traceId}</code></td>`));
  const linked = renderReportHtml({ ...data, trace_url: 'https://tempo.example/explore?q={trace_id}&a="b"' });
  assert.match(linked, new RegExp(`<a href="https://tempo.example/explore\\?q=${traceId}&amp;a=%22b%22" rel="noopener noreferrer" target="_blank"><code>${traceId}</code></a>`));
  for (const bad of ['javascript:alert(1)//{trace_id}', 'data:text/html,{trace_id}', 'https://tempo.example/no-placeholder']) {
    const html = renderReportHtml({ ...data, trace_url: bad });
    assert.doesNotMatch(html, /<a href=/, bad);
    assert.match(html, new RegExp(`<td><code>${traceId}</code></td>`), bad);
  }
});

test('text that could close the script element or open a comment is escaped, and the data reads back intact', async (t) => {
  const dir = writeFolder(join(tempDir(t), 'run'), { status: 'completed', records: [record()] });
  const data = await dataFor(dir);
  data.summary.run.name = 'x</script><script>alert(1)</script><!--';
  data.summary.run.labels = { note: '</SCRIPT ><!-- \u2028' };
  const html = renderReportHtml(data);
  assert.doesNotMatch(html, /alert\(1\)<\/script>/);
  assert.equal(html.match(/<\/script>/gi)?.length, 3);
  assert.doesNotMatch(html.slice(html.indexOf('id="report-data"')), /<!--/);
  const back = embedded(html);
  assert.equal(back.summary.run.name, data.summary.run.name);
  assert.deepEqual(back.summary.run.labels, data.summary.run.labels);
  assert.match(html, /<h1>x&lt;\/script&gt;&lt;script&gt;alert\(1\)/);
  assert.equal((JSON.parse(jsonForScript({ a: '</script><!--' })) as { a: string }).a, '</script><!--');
  assert.equal(scriptSafe('var s = "</script>"; // <!-- x'), 'var s = "<\\/script>"; // <\\!-- x');
});

test('a run without gauges, hangs, errors or events says so instead of drawing empty charts', async (t) => {
  const dir = writeFolder(join(tempDir(t), 'run'), { status: 'completed', records: [record()], workload: { thresholds: { hangs: null } } });
  const data = await dataFor(dir);
  const html = renderReportHtml(data);
  assert.match(html, /no gauges were monitored/);
  assert.match(html, /no hangs: every request reached a terminal state/);
  assert.match(html, /no errors/);
  assert.match(html, /<code>ok_requests<\/code> <span class="badge muted">always on<\/span>/, 'the always-on check is shown even with no thresholds of its own');
  assert.match(html, /no client samples in events\.jsonl/);
  assert.deepEqual(data.charts.gauges, []);
});

test('what a rebuild found missing is shown at the top', async (t) => {
  const dir = writeFolder(join(tempDir(t), 'run'), { records: [record()], requestsTail: '{"torn' });
  const html = renderReportHtml(await dataFor(dir));
  assert.match(html, /<span class="badge bad">killed<\/span>/);
  assert.match(html, /<div class="notes">.*requests\.jsonl: last line truncated \(line 2\), skipped/s);
});

test('what the server did not report and what the client estimated are said so, never shown as 0', async (t) => {
  const records = [record({ cached_tokens: null, tokens_estimated: true, prompt_tokens: 900, completion_tokens: 30 }), record({ round: 2, cached_tokens: null })];
  const dir = writeFolder(join(tempDir(t), 'run'), { status: 'completed', records });
  const html = renderReportHtml(await dataFor(dir));
  assert.match(html, /cached: not reported by the server/);
  assert.doesNotMatch(html, /0\.0% cached/);
  assert.match(html, /<span class="muted-text">not reported<\/span>/, 'the per-round cached cell');
  assert.match(html, /estimated for 1 requests \(no usage chunk: from the text\)/);
  assert.match(html, /~: token counts in part estimated/);
});

test('the errors table quotes the first error of each class with its status and URL path', async (t) => {
  const failed = record({ status: 'error', http_status: 404, ttft_ms: null, error: { class: 'http_4xx', message: 'HTTP 404: Not Found', code: '404', url_path: '/v1/v1/chat/completions' } });
  const dir = writeFolder(join(tempDir(t), 'run'), { status: 'completed', records: [failed, failed] });
  const html = renderReportHtml(await dataFor(dir));
  assert.match(html, /<code>\/v1\/v1\/chat\/completions<\/code>/);
  assert.match(html, /HTTP 404: Not Found/);
  assert.match(html, /<b>no request ended ok<\/b>/, 'the always-on check failing is in the verdict bar');
});

// The live dashboard in a real browser: headless Chromium opens `--dashboard` of a real run (the embedded
// engine, one stream stalled) and must see the figures change while the run goes on, the hang listed as
// it happens, live charts drawn with visible lines, and then, once the run is stopped, the page turn into
// the run's report.html, after which the server is gone.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { parseDashboardAddress } from '../../src/dashboard/index.js';
import { finishDashboard, openDashboard } from '../../src/commands/dashboard.js';
import { CHROMIUM_PATH, chromiumAvailable, openReportBrowser, type ReportBrowser } from '../helpers/browser.js';
import { ROOT } from '../helpers/root.js';

const missing = chromiumAvailable() ? null : `Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium; CHROMIUM_PATH overrides)`;
const skip = missing !== null && process.env.CI === undefined ? missing : false;

let browser: ReportBrowser | null = null;
const dir = mkdtempSync(join(tmpdir(), 'roundload-dashboard-browser-'));
after(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `#id`'s text on the page. */
const textOf = (id: string) => `document.getElementById(${JSON.stringify(id)}).textContent`;

test('--dashboard: the page updates while the run goes on, lists the hang as it happens, draws live charts, and becomes report.html at the end', { skip, timeout: 120_000 }, async () => {
  // The page reaches its loopback server, so this browser is not offline (it still loads nothing else).
  browser = await openReportBrowser({ offline: false });
  // A run far longer than the test needs (it is stopped once the page has been read), so the reads are
  // sure to come while it goes on however slow the machine is.
  const workload = await loadWorkload('workloads/smoke.yaml', {
    agents: 3,
    set: ['duration=120s', 'watchdog.stall_ms=1000', 'engine.faults=[{kind: stall_mid_stream, from_round: 3, times: 1}]'],
  });
  const dashboard = await openDashboard(parseDashboardAddress('0'), workload, null, () => {}, { tickMs: 200 });
  assert.match(dashboard.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const page = await browser.live(dashboard.url);
  let run: ReturnType<typeof executeRun> | null = null;
  const stop = new AbortController();
  try {
    // The page is connected before the run starts, so it sees the whole run.
    await page.waitFor(`document.getElementById('status').textContent === 'starting'`, 10_000);
    let runEnded = false;
    run = executeRun({ workload, out: join(dir, 'run'), signal: stop.signal, onEvent: (e) => dashboard.onEvent(e) }).then((r) => {
      runEnded = true;
      return r;
    });

    // Two reads during the run: requests done moved between them, and the run was still going at the second.
    await page.waitFor(`Number(${textOf('p-done')}.replace(/,/g, '')) >= 3`, 20_000);
    const first = await page.evaluate<string>(textOf('p-done'));
    const updates = Number(await page.evaluate<string>(`document.documentElement.getAttribute('data-updates')`));
    await page.waitFor(`${textOf('p-done')} !== ${JSON.stringify(first)} && Number(document.documentElement.getAttribute('data-updates')) > ${updates}`, 20_000);
    const second = await page.evaluate<string>(textOf('p-done'));
    assert.equal(runEnded, false, 'the second read came while the run was still going');
    assert.ok(Number(second) > Number(first), `requests done moved: ${first} → ${second}`);
    assert.equal(await page.evaluate<string>(textOf('status')), 'running');
    assert.match(await page.evaluate<string>(textOf('p-remaining')), /^1 min \d+ s left$|^\d+ s left$/, 'a duration run shows the time left');

    // The stalled stream is listed the moment the watchdog calls it a hang, before the run ends.
    await page.waitFor(`document.querySelectorAll('#hang-rows tr').length === 1`, 20_000);
    assert.equal(runEnded, false, 'the hang showed during the run');
    assert.match(await page.evaluate<string>(`document.querySelector('#hang-rows tr').textContent`), /mid_stream/);
    assert.equal(await page.evaluate<string>(textOf('p-hangs')), '1');

    // Live charts with data, and lines one can see; the embedded deployment's key gauges with their verdicts.
    await page.waitFor(`['live-ttft', 'live-throughput', 'live-gauges-decode'].every((id) => Number(document.querySelector('[data-chart="' + id + '"]')?.getAttribute('data-points')) > 0)`, 20_000);
    await page.waitFor(`document.querySelectorAll('[data-chart="live-ttft"] .u-legend tr.u-series').length === 3`, 5000);
    const ttft = await page.seriesPixels('live-ttft');
    assert.ok(ttft.length === 2 && ttft.every((s) => s.columns > 20), `TTFT p50 and p99 by round drawn: ${JSON.stringify(ttft)}`);
    assert.match(await page.evaluate<string>(`document.getElementById('targets').textContent`), /decode.*running \d/s);
    assert.equal(await page.evaluate<number>(`[...document.querySelectorAll('.u-legend .u-value')].filter((td) => td.textContent.trim() === '--').length`), 0, 'legends show values unhovered');

    // SGLang's long gauge names in full: the two router workers' series differ only in their worker label, and
    // both legend entries show it (the label wraps inside the chart, nothing cut); tokens and 0–1 shares each on
    // an axis of their own.
    await page.waitFor(
      `['live-gauges-router', 'live-gauges-decode-tokens', 'live-gauges-decode-share'].every((id) => Number(document.querySelector('[data-chart="' + id + '"]')?.getAttribute('data-points')) > 0)`,
      20_000,
    );
    const routerLabels = await page.evaluate<{ text: string; cut: boolean }[]>(
      `[...document.querySelectorAll('[data-chart="live-gauges-router"] .u-legend tr.u-series:not(:first-child) .u-label')].map((el) => { const fig = el.closest('figure').getBoundingClientRect(); const r = el.getBoundingClientRect(); return { text: el.textContent, cut: el.scrollWidth > el.clientWidth + 1 || r.right > fig.right + 1 }; })`,
    );
    assert.equal(routerLabels.length, 2, JSON.stringify(routerLabels));
    assert.notEqual(routerLabels[0]!.text, routerLabels[1]!.text, 'the two router series read differently');
    for (const l of routerLabels) assert.ok(/worker="http:\/\/127\.0\.0\.1:\d+"/.test(l.text) && !l.cut, `named in full, not cut: ${JSON.stringify(l)}`);
    const tokenLabels = await page.evaluate<string[]>(
      `[...document.querySelectorAll('[data-chart="live-gauges-decode-tokens"] .u-legend tr.u-series:not(:first-child) .u-label')].map((el) => el.textContent)`,
    );
    assert.deepEqual(
      tokenLabels.map((l) => l.replace(/ · .*$/, '')),
      ['num_used_tokens'],
      'tokens alone on their axis',
    );
    if (process.env.ROUNDLOAD_E2E_SCREENSHOTS === '1') {
      mkdirSync(join(ROOT, 'test', 'e2e', 'screenshots'), { recursive: true });
      await page.screenshot(join(ROOT, 'test', 'e2e', 'screenshots', 'dashboard-gauges.png'), '#charts-gauges');
      await page.screenshot(join(ROOT, 'test', 'e2e', 'screenshots', 'dashboard-targets.png'), '#gauges');
    }

    // The end: the page switches to the written report, then the server closes.
    stop.abort();
    const result = await run;
    assert.equal(result.status, 'interrupted');
    const finished = finishDashboard(dashboard, result);
    await page.waitFor(`location.pathname === '/report.html' && document.documentElement.getAttribute('data-report-ready') === '1'`, 20_000);
    assert.equal(await page.title(), 'roundload · smoke · interrupted');
    assert.ok(
      (await page.charts()).every((c) => c.points !== null && c.points > 0 && c.canvas),
      "the report's charts are drawn",
    );
    await finished;
    await assert.rejects(fetch(dashboard.url, { signal: AbortSignal.timeout(5000) }), 'the server closed with the run');
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(
      page.requests.filter((u) => !u.startsWith(dashboard.url)),
      [],
      'nothing but its own server',
    );
  } finally {
    // A failed assertion must not leave the run going after the test.
    stop.abort();
    await run?.catch(() => undefined);
    await page.close();
    await dashboard.close();
  }
});

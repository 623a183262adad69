// Headless Chromium (the Debian package, driven by playwright-core) for checking report.html as a person
// would see it: every chart drawn with data, no console errors, no request other than the file itself.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for a quiet, offline, sandbox-free headless Chromium (no QUIC, no background fetches, no sync). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export interface ChartCheck {
  id: string;
  /** `data-points` after drawing (null: the page never marked the chart). */
  points: number | null;
  canvas: boolean;
  error: string | null;
}

/** What one series of a chart puts on the canvas, drawn alone (the others hidden through the legend, as
 * a person would): the plot columns holding a pixel of its colour. A line covers (nearly) every column
 * between its first and last point; separate dots leave most of them blank. */
export interface SeriesPixels {
  label: string;
  /** `rgb(r, g, b)`, from the legend marker. */
  color: string;
  /** Plot columns with at least one pixel of the colour (device pixels). */
  columns: number;
  first: number;
  last: number;
  /** columns / (last − first + 1); 0 when nothing is drawn. */
  coverage: number;
}

export interface ReportCheck {
  title: string;
  charts: ChartCheck[];
  /** Legend values reading `--` (uPlot's "no value") over all charts: legends must show a value unhovered. */
  legendDashes: number;
  /** Per chart id asked for in `pixels`: each series drawn alone. */
  pixels: Record<string, SeriesPixels[]>;
  /** Per chart id asked for in `colors`: per colour (`#rrggbb`), the plot columns holding a pixel of it. */
  colorColumns: Record<string, Record<string, number>>;
  /** Rows of the hang table. */
  hangRows: number;
  /** Charts without data: no `data-points` > 0 or no canvas. */
  empty: string[];
  /** console.error messages and uncaught page errors. */
  consoleErrors: string[];
  /** Every URL the page requested that is not file:// (must stay empty: the report is self-contained). */
  foreignRequests: string[];
  /** Every URL requested, for the record. */
  requests: string[];
}

export interface ReportBrowser {
  /** `screenshot`: a PNG of the page from the top down to the bottom of the first `screenshotTo` selector
   * found (the whole page without one). */
  check(file: string, options?: { screenshot?: string; screenshotTo?: string[]; timeoutMs?: number; pixels?: string[]; colors?: Record<string, string[]> }): Promise<ReportCheck>;
  /** Opens a page served over HTTP (the live dashboard) and keeps it open for the test to read. */
  live(url: string, options?: { timeoutMs?: number }): Promise<LivePage>;
  /** Parses XML with the browser's DOMParser: the parser error, and the testcase/failure counts of JUnit. */
  parseXml(xml: string): Promise<{ error: string | null; testcases: number; failures: number }>;
  close(): Promise<void>;
}

/** A page left open while the test watches it change. */
export interface LivePage {
  /** Runs page-side code (a string: DOM types are not in this project's lib). */
  evaluate<T>(js: string): Promise<T>;
  /** Waits until the page-side expression is truthy. */
  waitFor(js: string, timeoutMs: number): Promise<void>;
  url(): string;
  title(): Promise<string>;
  /** Each series of a chart drawn alone, as in ReportCheck.pixels. */
  seriesPixels(id: string): Promise<SeriesPixels[]>;
  /** Per chart: `data-points`, canvas, error (as in ReportCheck.charts). */
  charts(): Promise<ChartCheck[]>;
  /** A PNG of the elements matching `selector` (the first), at `path`. */
  screenshot(path: string, selector: string): Promise<void>;
  readonly consoleErrors: string[];
  readonly requests: string[];
  close(): Promise<void>;
}

// Page-side code as strings: it runs in the browser (DOM types are not in this project's lib).
const ALL_MARKED_JS = `[...document.querySelectorAll('[data-chart]')].every((el) => el.hasAttribute('data-points'))`;
const CHARTS_JS = `[...document.querySelectorAll('[data-chart]')].map((el) => ({
  id: el.getAttribute('data-chart') ?? '',
  points: el.hasAttribute('data-points') ? Number(el.getAttribute('data-points')) : null,
  canvas: el.querySelector('canvas') !== null,
  error: el.getAttribute('data-error'),
}))`;

const HANG_ROWS_JS = `document.querySelectorAll('#hangs tr.hang-row').length`;
const LEGEND_DASHES_JS = `[...document.querySelectorAll('.u-legend .u-value')].filter((td) => td.textContent.trim() === '--').length`;

/** Page-side: the plot area of a chart (inside its axes) as device pixels: a pixel in from the left and right,
 * its full height (a series at the scale's minimum, a stretch of zeros, is drawn on the bottom edge). */
const PLOT_PIXELS_JS = `(el) => {
  const canvas = el.querySelector('canvas');
  const over = el.querySelector('.u-over');
  if (!canvas || !over) return null;
  const ratio = canvas.width / canvas.clientWidth;
  const cRect = canvas.getBoundingClientRect();
  const oRect = over.getBoundingClientRect();
  const x0 = Math.ceil((oRect.left - cRect.left) * ratio) + 1, x1 = Math.floor((oRect.right - cRect.left) * ratio) - 1;
  const y0 = Math.floor((oRect.top - cRect.top) * ratio), y1 = Math.ceil((oRect.bottom - cRect.top) * ratio);
  return canvas.getContext('2d').getImageData(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
}`;

/** Page-side: columns of the plot area holding [r, g, b] (within a small distance) for at least 60% of a pixel's
 * worth of alpha. Summed over the column, not asked of one pixel: Chromium draws a 1.6-px line whose centre falls on a
 * pixel boundary as two pixels of alpha 191 each, and a line along the bottom edge (zeros) half clipped, 0.8 px. */
const COLUMNS_JS = `(img, cr, cg, cb) => {
  const w = img.width, h = img.height, d = img.data;
  const enough = 153; // 60% of one opaque pixel's alpha
  let columns = 0, first = -1, last = -1;
  for (let x = 0; x < w; x += 1) {
    let alpha = 0;
    for (let y = 0; y < h && alpha < enough; y += 1) {
      const i = (y * w + x) * 4;
      if (d[i + 3] >= 32 && Math.abs(d[i] - cr) + Math.abs(d[i + 1] - cg) + Math.abs(d[i + 2] - cb) <= 48) alpha += d[i + 3];
    }
    if (alpha >= enough) {
      columns += 1;
      if (first < 0) first = x;
      last = x;
    }
  }
  return { columns, first, last };
}`;

/** Page-side: per colour, the plot columns of a chart holding it. */
const COLOR_COLUMNS_JS = `(id, colors) => {
  const el = document.querySelector('[data-chart="' + CSS.escape(id) + '"]');
  const img = el ? (${PLOT_PIXELS_JS})(el) : null;
  const out = {};
  for (const c of colors) {
    const n = parseInt(c.slice(1), 16);
    out[c] = img === null ? 0 : (${COLUMNS_JS})(img, n >> 16, (n >> 8) & 255, n & 255).columns;
  }
  return out;
}`;

/** Page-side: each series of the chart drawn alone (legend clicks hide the others), its colour's columns. */
const SERIES_PIXELS_JS = `async (id) => {
  const el = document.querySelector('[data-chart="' + CSS.escape(id) + '"]');
  if (!el) return null;
  const rows = [...el.querySelectorAll('.u-legend tr.u-series')].slice(1);
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const out = [];
  for (let k = 0; k < rows.length; k += 1) {
    const others = rows.filter((r, j) => j !== k && !r.classList.contains('u-off'));
    others.forEach((r) => r.querySelector('th').click());
    await frame();
    const color = getComputedStyle(rows[k].querySelector('.u-marker')).borderColor;
    const m = /rgba?\\((\\d+),\\s*(\\d+),\\s*(\\d+)/.exec(color);
    const img = (${PLOT_PIXELS_JS})(el);
    const { columns, first, last } = m && img ? (${COLUMNS_JS})(img, Number(m[1]), Number(m[2]), Number(m[3])) : { columns: 0, first: -1, last: -1 };
    others.forEach((r) => r.querySelector('th').click());
    await frame();
    out.push({ label: rows[k].querySelector('.u-label')?.textContent ?? '', color, columns, first, last, coverage: columns === 0 ? 0 : columns / (last - first + 1) });
  }
  return out;
}`;

/** Polls a page-side expression (through the DevTools protocol, which a page's CSP does not govern, unlike
 * waitForFunction's eval) until it is truthy; throws after `timeoutMs`. */
async function until(page: Page, js: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await page.evaluate(js).catch(() => false)) return;
    if (Date.now() >= deadline) throw new Error(`page never satisfied ${js} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]);
}

/** Launches Chromium with a fresh profile that is removed on close. `offline` (the default) lets a page
 * load no URL but file://; the dashboard test turns it off to reach its loopback server. */
export async function openReportBrowser(options: { timeoutMs?: number; offline?: boolean } = {}): Promise<ReportBrowser> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const profile = mkdtempSync(join(tmpdir(), 'roundload-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1360, height: 900 },
      deviceScaleFactor: 1,
      timeout: timeoutMs,
      offline: options.offline ?? true,
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  /** A new page that records its console errors and every URL it requests. */
  const watchedPage = async (): Promise<{ page: Page; consoleErrors: string[]; requests: string[] }> => {
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    page.on('request', (r) => requests.push(r.url()));
    return { page, consoleErrors, requests };
  };
  return {
    async check(file, opts = {}) {
      const limit = opts.timeoutMs ?? 20_000;
      const { page, consoleErrors, requests } = await watchedPage();
      try {
        await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: limit });
        await page.waitForSelector('html[data-report-ready="1"]', { timeout: limit });
        // Charts mark themselves in uPlot's first draw; give each a moment after the script finished.
        await until(page, ALL_MARKED_JS, 5000).catch(() => undefined);
        const charts = await page.evaluate<ChartCheck[]>(CHARTS_JS);
        const title = await page.title();
        const hangRows = await page.evaluate<number>(HANG_ROWS_JS);
        const legendDashes = await page.evaluate<number>(LEGEND_DASHES_JS);
        const pixels: Record<string, SeriesPixels[]> = {};
        for (const id of opts.pixels ?? []) pixels[id] = (await page.evaluate<SeriesPixels[] | null>(`(${SERIES_PIXELS_JS})(${JSON.stringify(id)})`)) ?? [];
        const colorColumns: Record<string, Record<string, number>> = {};
        for (const [id, colors] of Object.entries(opts.colors ?? {}))
          colorColumns[id] = await page.evaluate<Record<string, number>>(`(${COLOR_COLUMNS_JS})(${JSON.stringify(id)}, ${JSON.stringify(colors)})`);
        if (opts.screenshot !== undefined) {
          let bottom: number | null = null;
          for (const selector of opts.screenshotTo ?? []) {
            const box = await page
              .locator(selector)
              .first()
              .boundingBox()
              .catch(() => null);
            if (box !== null) {
              bottom = Math.ceil(box.y + box.height + 16);
              break;
            }
          }
          const width = page.viewportSize()?.width ?? 1360;
          await page.screenshot({ path: opts.screenshot, fullPage: true, timeout: limit, ...(bottom === null ? {} : { clip: { x: 0, y: 0, width, height: bottom } }) });
        }
        return {
          title,
          charts,
          hangRows,
          legendDashes,
          pixels,
          colorColumns,
          empty: charts.filter((c) => c.points === null || c.points <= 0 || !c.canvas).map((c) => c.id),
          consoleErrors,
          foreignRequests: requests.filter((u) => !u.startsWith('file://')),
          requests,
        };
      } finally {
        await bounded(page.close(), 10_000, 'closing the page').catch(() => undefined);
      }
    },
    async live(url, opts = {}) {
      const limit = opts.timeoutMs ?? 20_000;
      const { page, consoleErrors, requests } = await watchedPage();
      await page.goto(url, { waitUntil: 'load', timeout: limit });
      return {
        evaluate: async <T>(js: string) => await page.evaluate<T>(js),
        waitFor: (js, timeoutMs) => until(page, js, timeoutMs),
        url: () => page.url(),
        title: () => page.title(),
        seriesPixels: async (id) => (await page.evaluate<SeriesPixels[] | null>(`(${SERIES_PIXELS_JS})(${JSON.stringify(id)})`)) ?? [],
        charts: async () => await page.evaluate<ChartCheck[]>(CHARTS_JS),
        screenshot: async (path, selector) => {
          await page.locator(selector).first().screenshot({ path, timeout: 20_000 });
        },
        consoleErrors,
        requests,
        close: () => bounded(page.close(), 10_000, 'closing the page').catch(() => undefined),
      };
    },
    async parseXml(xml) {
      const page = await context.newPage();
      try {
        const js = `((xml) => {
          const doc = new DOMParser().parseFromString(xml, 'application/xml');
          const err = doc.getElementsByTagName('parsererror')[0];
          return { error: err ? err.textContent : null, testcases: doc.getElementsByTagName('testcase').length, failures: doc.getElementsByTagName('failure').length };
        })(${JSON.stringify(xml)})`;
        return await page.evaluate<{ error: string | null; testcases: number; failures: number }>(js);
      } finally {
        await bounded(page.close(), 10_000, 'closing the page').catch(() => undefined);
      }
    },
    async close() {
      await bounded(context.close(), 15_000, 'closing Chromium').catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// The diagnosis's former dead zones against real parts (issue 33): nginx answering 502 at once (its upstream
// port closed) while the engine, its own process, is healthy and scraped — proxy, and at 0.6 or more with
// canaries; an engine frozen (SIGSTOP) behind nginx with proxy_read_timeout 2s, no scrape targets, canaries
// on — engine, the timeout named. Once in `npm test`, 3 of 3 in `npm run test:repeat`.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';
import { realPartsWorkload, runWithActs, showDiagnosis, why, type Acts } from '../helpers/real-parts.js';
import { freePort, requireTool, spawnEngine, startNginx, type EngineProc } from '../helpers/procs.js';
import { REPEATS, TIMES } from '../helpers/repeats.js';

/** A fast engine: short answers, quick steps. */
const ENGINE = { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };

interface Setup {
  /** Seconds between canaries; 0: none. */
  canaryS: number;
  /** Scrape the engine's /metrics. */
  scraped: boolean;
  /** What to do to the parts, in ms after the run's first request event. */
  acts?: Acts;
  duration?: string;
}

/** A run of 4 agents through nginx at `proxyUrl` to `engine`, with the watchdog's deadlines past nginx's 2 s.
 * No preflight: its one request would fail like the agents' (a 502, or cut at 2 s) and end the run. */
async function run(t: TestContext, engine: Pick<EngineProc, 'url' | 'targets'>, proxyUrl: string, s: Setup): Promise<Summary> {
  const dir = join(tempDir(t), 'run');
  const workload = realPartsWorkload('dead-zones', {
    engine,
    via: `{kind: tls-proxy, url: "${proxyUrl}"}`,
    scraped: s.scraped,
    duration: s.duration ?? '4s',
    watchdog: '{connect_ms: 1000, headers_ms: 4000, first_token_ms: 5000, stall_ms: 5000, total_ms: 6000}',
    canary: { interval_s: s.canaryS, timeout_ms: 1000 },
  });
  const summary = await runWithActs(workload, dir, { acts: s.acts ?? [] });
  showDiagnosis(t, summary, dir);
  return summary;
}

test(`nginx answering 502 at once (its upstream port closed) while the engine is healthy and scraped is proxy, and at 0.6 or more with canaries, ${TIMES}`, async (t) => {
  const nginx = requireTool(t, 'nginx', 'apt-get install nginx');
  if (nginx === null) return;
  const engine = await spawnEngine(t, ENGINE);
  // nginx's upstream is a port nothing listens on: every request gets nginx's own 502 page at once.
  const proxy = await startNginx(t, nginx, await freePort(), { buffering: false });
  for (let i = 0; i < REPEATS; i += 1) {
    const bare = await run(t, engine, proxy.url, { canaryS: 0, scraped: true });
    assert.ok(bare.totals.errors >= 10 && bare.totals.ok === 0, `repeat ${i}: ${JSON.stringify(bare.totals)}`);
    assert.equal(bare.diagnosis.verdict, 'proxy', `repeat ${i}, no canaries: ${why(bare)}`);
    assert.match(bare.diagnosis.evidence.join('\n'), /error page \(HTTP 502\).*the proxy could not reach an engine seen answering/, `repeat ${i}: ${why(bare)}`);
    const canaried = await run(t, engine, proxy.url, { canaryS: 0.25, scraped: true });
    assert.equal(canaried.diagnosis.verdict, 'proxy', `repeat ${i}, canaries: ${why(canaried)}`);
    assert.ok((canaried.diagnosis.confidence ?? 0) >= 0.6, `repeat ${i}, canaries: ${why(canaried)}`);
  }
});

test(`an engine frozen (SIGSTOP) behind nginx with proxy_read_timeout 2s, no scrape targets, canaries on, is engine with the timeout named, ${TIMES}`, async (t) => {
  const nginx = requireTool(t, 'nginx', 'apt-get install nginx');
  if (nginx === null) return;
  for (let i = 0; i < REPEATS; i += 1) {
    const engine = await spawnEngine(t, ENGINE);
    const proxy = await startNginx(t, nginx, engine.port, { buffering: false, readTimeoutS: 2 });
    // Frozen from 1 s to 8 s of a 9 s run: every request sent meanwhile waits out nginx's 2 s. Long, so the
    // streams that were flowing when it began (seen streaming until nginx cuts them) stay a small share of
    // the episode: at 5 s they were near half of it, and work flowing reads as a slow engine, not a stopped one.
    const summary = await run(t, engine, proxy.url, {
      canaryS: 0.25,
      scraped: false,
      duration: '9s',
      acts: [
        [1000, () => engine.freeze()],
        [8000, () => engine.thaw()],
      ],
    });
    engine.thaw();
    assert.ok(summary.totals.errors >= 3, `repeat ${i}: nginx cut requests: ${JSON.stringify(summary.totals)}`);
    assert.equal(summary.diagnosis.verdict, 'engine', `repeat ${i}: ${why(summary)}`);
    const cut = summary.diagnosis.path_timeout;
    assert.ok(cut !== undefined && Math.abs(cut.seconds - 2) <= 0.2, `repeat ${i}: ${why(summary)}`);
    assert.match(summary.diagnosis.evidence.join('\n'), /what the agents saw was the path's timeout firing at (1\.9|2\.\d) s on an engine that did not answer/, `repeat ${i}: ${why(summary)}`);
    await proxy.stop();
    await engine.stop();
  }
});

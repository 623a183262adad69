// Fuzz of what the terminal formatters print (issue 42 item 3): every string field and every key of what they
// take (a summary, a live notice, the live line's figures, a preflight, a comparison, a trend, a trace's statistics, a path's probe), one at a time, carries text
// with window-title, clipboard, clear-screen and C1 controls and line breaks; the text printed holds no control
// but roundload's own colours and no line of that text's making. A mutation a formatter cannot format (a
// verdict or status outside its list) is counted, not printed; most fields must print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rebuildReports } from '../../src/commands/report.js';
import { compareArms, formatComparison } from '../../src/compare/index.js';
import { SeededRandom } from '../../src/compare/stats.js';
import { formatSummary } from '../../src/report/index.js';
import { noticeLine, progressFields, render, colors } from '../../src/report/progress-line.js';
import type { Notice, ProgressFigures } from '../../src/report/progress-state.js';
import { preflightFailure, preflightLine } from '../../src/run/preflight.js';
import { workloadSchema, type Workload } from '../../src/config/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { PreflightEvent } from '../../src/types/index.js';
import { assertTerminalClean, hostileText, stringSites } from '../helpers/hostile-text.js';
import { tempDir } from '../helpers/tmp.js';
import { gauge, hangRecord, plainRecord, scrape, writeFolder } from './fixtures.js';
import { ar1, run } from '../compare/helpers.js';
import { buildTrend, formatTrend, metricOf } from '../../src/trend/index.js';
import type { PhasePoint } from '../../src/history/index.js';
import { formatTraceStats, importTrace, readTrace, traceStats } from '../../src/trace/index.js';
import { formatProbe } from '../../src/probe-path/format.js';
import type { ProbeReport } from '../../src/probe-path/probe.js';

const HOSTILE = hostileText('fuzz');

/** Formats `value` with each of its strings and keys made hostile in turn; returns how many printed. */
function fuzz(value: unknown, format: (v: unknown) => string, what: string): { printed: number; sites: number } {
  const sites = stringSites(value);
  let printed = 0;
  for (const site of sites) {
    let text: unknown;
    try {
      text = format(site.mutate((old) => `${old}${HOSTILE}`));
    } catch {
      continue;
    }
    // A kind outside the union falls out of a switch: nothing printed.
    if (typeof text !== 'string') continue;
    printed += 1;
    assertTerminalClean(text, `${what} with ${site.path} hostile`, false);
  }
  return { printed, sites: sites.length };
}

test('the terminal summary: every field and key of a rebuilt summary (errors, gauges, diagnosis, thresholds) printed hostile stays clean', async (t) => {
  const dir = writeFolder(join(tempDir(t), 'run'), {
    status: 'completed',
    endedAt: '2026-01-01T00:00:10.000Z',
    records: [
      plainRecord({ run_ms: 100 }),
      plainRecord({ run_ms: 400, agent: 1 }),
      hangRecord({ run_ms: 2000, agent: 0, round: 2 }),
      plainRecord({
        run_ms: 3000,
        agent: 1,
        round: 2,
        status: 'error',
        http_status: 500,
        error: { class: 'http_5xx', message: 'HTTP 500: engine said no', code: '500', url_path: '/v1/chat/completions' },
      }),
    ],
    scrapes: [0, 500, 1000, 1500, 2000, 2500].map((ms) =>
      scrape(ms, [gauge('sglang:num_running_reqs', ms % 1000 === 0 ? 2 : 0, { model_name: 'm' }), gauge('sglang:num_queue_reqs', 0, { model_name: 'm' })]),
    ),
  });
  const { summary } = await rebuildReports(dir);
  assert.ok((summary.first_errors ?? []).length > 0 && summary.gauges.length > 0, 'a summary with errors and gauges');
  const { printed, sites } = fuzz(summary, (s) => formatSummary(s as Summary, dir, { color: true }), 'formatSummary');
  t.diagnostic(`${printed} of ${sites} mutations printed`);
  assert.ok(printed > 200 && printed > sites * 0.8, `${printed} of ${sites} printed`);
  assertTerminalClean(formatSummary(summary, `${dir}${HOSTILE}`), 'formatSummary with a hostile folder');
});

test('the live notices and the live line: every field of each notice and of the figures printed hostile stays clean', () => {
  const notices: Notice[] = [
    { kind: 'hang', atMs: 1000, record: hangRecord() },
    { kind: 'first_error', atMs: 1000, errorClass: 'http_5xx', message: 'HTTP 500: no', agent: 0, conversation: 'a0-c1', round: 1 },
    { kind: 'target_down', atMs: 1000, target: 'decode', url: 'http://127.0.0.1:1/metrics', error: 'refused', lastUpAgoMs: 500 },
    { kind: 'target_up', atMs: 1000, target: 'decode', downForMs: 500 },
    { kind: 'delayed', atMs: 1000, conversation: 'a0-c1', phase: 'main', lagMs: 20, active: 3 },
    { kind: 'saturated', atMs: 1000, loopDelayP99Ms: 80, utilization: 0.95, inFlight: 4, thread: null, busy: true, cpuWaitMs: null, windowMs: 1000 },
  ];
  let printed = 0;
  for (const n of notices) printed += fuzz(n, (v) => noticeLine(v as Notice, colors(true)), `noticeLine ${n.kind}`).printed;
  assert.ok(printed >= 40, `${printed} notices printed`);
  const figures: ProgressFigures = {
    elapsedMs: 12_000,
    remainingMs: 3000,
    phase: 'main',
    done: 10,
    planned: 20,
    requestsPerS: 2,
    outputTokensPerS: 100,
    ttftP50Ms: 40,
    ttftP99Ms: 90,
    errors: 1,
    hangs: 1,
    inFlight: 3,
    streaming: 2,
    oldestInFlightMs: 800,
    gauges: [{ name: 'running', value: 3 }],
    targetsDown: ['prefill'],
    arrivals: { startsPerS: 1, active: 2, startLagP99Ms: 5, delayed: 1 },
  };
  assert.ok(fuzz(figures, (f) => render(progressFields(f as ProgressFigures), colors(true)), 'the live line').printed >= 3);
});

test("the preflight: a server's message, its model ids and its notes printed hostile, in the failure and the passing line, stay clean", () => {
  const workload = workloadSchema.parse({ name: 'w', target: { url: 'http://127.0.0.1:1', model: 'm' } }) as Workload;
  const event: PreflightEvent = {
    kind: 'preflight',
    t: '2026-01-01T00:00:00.000Z',
    run_ms: 10,
    ok: false,
    url: 'http://127.0.0.1:1/v1/chat/completions',
    proxy: null,
    http_status: 404,
    ttft_ms: null,
    e2e_ms: 5,
    error: { class: 'http_4xx', message: 'HTTP 404: model not found', code: '404', url_path: '/v1/chat/completions' },
    hang: null,
    model: 'm',
    models: ['served-model', 'other'],
    models_error: null,
    model_listed: false,
    notes: ['target.model "m" is not among the models'],
  };
  const failure = fuzz(event, (e) => preflightFailure(e as PreflightEvent, workload).message, 'preflightFailure');
  const passing = fuzz({ ...event, ok: true, http_status: 200, error: null, model_listed: true, ttft_ms: 3 }, (e) => preflightLine(e as PreflightEvent), 'preflightLine');
  assert.ok(failure.printed >= 15 && passing.printed >= 15, `${failure.printed}, ${passing.printed}`);
});

test("compare's table: every field of a comparison (run names, folders, labels, differences) printed hostile stays clean", () => {
  const rng = new SeededRandom(7);
  const base = { name: 'w', window_s: 1, labels: { arm: 'a' }, target: { url: 'http://a:1', model: 'm' }, agents: { count: 8, rounds: 10 } };
  const a = run('a', ar1(rng, 12, 1000, 0.02, 0), { workload: base });
  const b = run('b', ar1(rng, 12, 1000, 0.02, 0), { workload: { ...base, agents: { count: 16, rounds: 10 } } });
  const comparison = compareArms({ name: 'A', runs: [a] }, { name: 'B', runs: [b] }, { force: true });
  const { printed, sites } = fuzz(comparison, (c) => formatComparison(c as typeof comparison), 'formatComparison');
  assert.ok(printed > sites * 0.8, `${printed} of ${sites} printed`);
});

test("trend's table: every field of a trend (run ids, names, labels, the database's name) printed hostile stays clean", () => {
  const metrics = ['itl_p50', 'output_tok_s'].map((n) => metricOf(n)!);
  const points: PhasePoint[] = [0, 1, 2, 3, 4, 5].map((i) => ({
    run: { runId: `run${i}`, name: 'nightly', startedAt: `2026-12-0${i + 1}T02:00:00.000Z`, dir: null, labels: { arm: 'a' }, cells: { status: 'completed' } },
    figures: { itl_p50_ms: i < 3 ? 6 : 7, output_tokens_per_s: i < 3 ? 500 : 450 },
  }));
  const trend = buildTrend('main', points, metrics);
  const { printed, sites } = fuzz(trend, (tr) => formatTrend(tr as typeof trend, 'h.db'), 'formatTrend');
  assert.ok(printed > sites * 0.8, `${printed} of ${sites} printed`);
  assertTerminalClean(formatTrend(trend, `h.db${HOSTILE}`), 'formatTrend with a hostile database name');
});

test("a shared trace's statistics: every field (its file, upstream, models, error classes) printed hostile stays clean", (t) => {
  const dir = tempDir(t);
  const log = join(dir, 'log.jsonl');
  const line = (ms: number, content: string) => ({
    timestamp: new Date(Date.UTC(2026, 0, 1) + ms).toISOString(),
    request: { model: 'm', stream: true, messages: [{ role: 'user', content }] },
    response: { choices: [{ message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 2 } },
  });
  writeFileSync(log, [line(0, 'a'), line(100, 'b')].map((l) => JSON.stringify(l)).join('\n'));
  importTrace({ format: 'openai', file: log, out: join(dir, 'trace.jsonl') });
  const stats = traceStats(readTrace(join(dir, 'trace.jsonl')));
  const { printed, sites } = fuzz({ ...stats, upstream: 'http://127.0.0.1:1' }, (s) => formatTraceStats(s as typeof stats), 'formatTraceStats');
  assert.ok(printed > sites * 0.8, `${printed} of ${sites} printed`);
});

test("probe-path's table: what the path answered (its Keep-Alive and Server headers, how it cut) printed hostile stays clean", () => {
  const report: ProbeReport = {
    url: 'http://127.0.0.1:1',
    path: 'direct',
    model: 'm',
    idle: { kind: 'closes', keptMs: 4000, closedMs: 6000, estimateMs: 5000, maxIdleMs: 60_000, keepAliveHeader: 'timeout=5', tried: [], elapsedMs: 9000 },
    read: { kind: 'cut', atMs: 30_000, status: 504, how: 'HTTP 504 from nginx', maxHoldMs: 60_000 },
    stream: { kind: 'buffers', firstByteMs: 900, events: 20, spreadMs: 3, bursts: 1, serverFirstTokenMs: 40, detail: '20 events arrived at once' },
    body: { kind: 'limit', acceptedBytes: 1_000_000, rejectedBytes: 2_000_000, how: 'HTTP 413 from nginx', tried: [] },
    elapsedMs: 40_000,
  };
  const { printed, sites } = fuzz(report, (r) => formatProbe(r as ProbeReport), 'formatProbe');
  assert.ok(printed >= 5 && printed > sites * 0.5, `${printed} of ${sites} printed`);
});

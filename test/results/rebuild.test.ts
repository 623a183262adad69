import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rebuildSummary } from '../../src/results/index.js';
import { SummaryBuilder } from '../../src/analysis/index.js';
import { NotARunError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';
import { hangRecord, record, scrape, gauge, writeFolder } from '../report/fixtures.js';

const sample = (runMs: number, p99: number) => ({
  kind: 'client_sample',
  t: '2026-01-01T00:00:01.000Z',
  run_ms: runMs,
  window_ms: 1000,
  loop_delay_p99_ms: p99,
  loop_delay_max_ms: p99 + 1,
  loop_utilization: 0.2,
  in_flight: 2,
  rss_bytes: 1,
});

test('a killed run (run.json "running", no run_end, no summary, a torn last line) rebuilds as "killed" from its complete lines', async (t) => {
  const records = [record({ round: 1, run_ms: 0 }), record({ round: 2, run_ms: 400, t: '2026-01-01T00:00:00.400Z' }), hangRecord({ round: 3, run_ms: 900, t: '2026-01-01T00:00:00.900Z' })];
  const dir = writeFolder(join(tempDir(t), 'killed'), {
    records,
    requestsTail: '{"t":"2026-01-01T00:00:02.000Z","run_ms":2000,"agent":1,"conv',
    events: [{ kind: 'run_start', t: '2026-01-01T00:00:00.000Z' }, sample(1000, 4), sample(2000, 80)],
  });
  const r = await rebuildSummary(dir);
  assert.equal(r.summary.run.status, 'killed');
  assert.equal(r.summary.totals.requests, 3);
  assert.equal(r.summary.totals.ok, 2);
  assert.equal(r.summary.totals.hangs, 1);
  assert.equal(r.files.requests.records, 3);
  assert.equal(r.summary.client.samples, 2);
  assert.equal(r.summary.client.saturated_windows, 1, 'the 80 ms loop-delay sample is a saturated window');
  assert.deepEqual(r.had, { summary: false, histograms: false });
  const notes = r.notes.join('\n');
  assert.match(notes, /summary\.json was missing/);
  assert.match(notes, /histograms\.json missing: ITL percentiles approximated/);
  assert.match(notes, /requests\.jsonl: last line truncated \(line 4\), skipped/);
  assert.match(notes, /killed before it finished.*3 requests/);
  assert.match(notes, /end time estimated from the last record/);
  // The last record was a hang sent at 0.9 s that lasted 1 s: the run was alive until at least 1.9 s.
  assert.equal(r.summary.run.ended_at, '2026-01-01T00:00:01.900Z');
  assert.equal(r.summary.run.wall_s, 1.9);
  // The default thresholds (a hang fails) judge the rebuilt run as the live run would have.
  assert.equal(r.summary.thresholds.ok, false);
});

test('a run whose manifest still says "running" but whose events.jsonl has run_end takes the status from run_end', async (t) => {
  const dir = writeFolder(join(tempDir(t), 'late'), {
    records: [record()],
    events: [{ kind: 'run_end', t: '2026-01-01T00:00:05.000Z', run_ms: 5000, status: 'interrupted', reason: 'stopped by signal' }],
  });
  const r = await rebuildSummary(dir);
  assert.equal(r.summary.run.status, 'interrupted');
  assert.equal(r.summary.run.ended_at, '2026-01-01T00:00:05.000Z');
  assert.match(r.notes.join('\n'), /process died while writing its final files/);
});

test("the run's own thresholds from run.json are applied on rebuild", async (t) => {
  const dir = writeFolder(join(tempDir(t), 'th'), {
    status: 'completed',
    endedAt: '2026-01-01T00:00:10.000Z',
    records: [record(), record({ status: 'error', error: { class: 'http_5xx', message: 'boom', code: '500' }, ttft_ms: null })],
    workload: { window_s: 10, thresholds: { hangs: null, error_rate: 0.1 } },
  });
  const r = await rebuildSummary(dir);
  assert.equal(r.summary.run.status, 'completed');
  assert.deepEqual(
    r.summary.thresholds.results.map((x) => [x.name, x.ok]),
    [
      ['ok_requests', true],
      ['error_rate', false],
    ],
  );
  assert.deepEqual(r.summary.errors_by_class, { http_5xx: 1 });
});

test('ITL comes from histograms.json when it is there, and ttft/e2e are not counted twice', async (t) => {
  const records = [record({ round: 1, ttft_ms: 30 }), record({ round: 1, ttft_ms: 50, run_ms: 10 })];
  const dir = writeFolder(join(tempDir(t), 'h'), { status: 'completed', records });
  // What a live run puts in histograms.json: ttft/e2e from records and the real ITL gaps (here 7 ms each).
  const live = new SummaryBuilder({ itlFromRecords: false });
  for (const r of records) live.add(r);
  for (let i = 0; i < 40; i += 1) live.histograms.recordMs('itl', 'main', 1, 7);
  writeFileSync(join(dir, 'histograms.json'), JSON.stringify(live.histograms.toFile()));
  const r = await rebuildSummary(dir);
  const round = r.summary.phases[0]!.rounds[0]!;
  assert.equal(round.ttft.count, 2, 'ttft recorded once per record');
  assert.equal(round.itl.count, 40);
  assert.ok(Math.abs(round.itl.p50_ms - 7) < 0.1, String(round.itl.p50_ms));
  assert.equal(r.had.histograms, true);
  assert.doesNotMatch(r.notes.join('\n'), /histograms\.json/);
});

test('gauge verdicts are judged again from gauges.jsonl', async (t) => {
  const scrapes = Array.from({ length: 61 }, (_, i) => scrape(i * 1000, [gauge('sglang:num_running_reqs', 0)]));
  const dir = writeFolder(join(tempDir(t), 'g'), { status: 'completed', records: [record()], scrapes });
  const r = await rebuildSummary(dir);
  assert.equal(r.files.gauges.records, 61);
  assert.deepEqual(
    r.summary.gauges.map((g) => [g.target, g.name, g.verdict, g.samples]),
    [['engine', 'sglang:num_running_reqs', 'idle', 61]],
  );
  assert.doesNotMatch(r.notes.join('\n'), /kept from the previous/);
});

test('verdicts of a previous summary.json are kept (and said so) when the folder no longer has the scrapes', async (t) => {
  const dir = writeFolder(join(tempDir(t), 'g'), { status: 'completed', records: [record()] });
  const verdict = {
    target: 'engine',
    name: 'sglang:num_running_reqs',
    labels: {},
    verdict: 'rotating',
    samples: 1,
    window_s: 1,
    longest_nonzero_s: 1,
    dips: 0,
    last_value: 1,
    needed_s: null,
    evidence: [],
  };
  const first = await rebuildSummary(dir);
  writeFileSync(join(dir, 'summary.json'), JSON.stringify({ ...first.summary, gauges: [verdict] }));
  const r = await rebuildSummary(dir);
  assert.deepEqual(r.summary.gauges, [verdict]);
  assert.match(r.notes.join('\n'), /gauge verdicts kept from the previous summary\.json/);
});

test('a folder that is not a run is a NotARunError', async (t) => {
  await assert.rejects(rebuildSummary(tempDir(t)), (e: unknown) => e instanceof NotARunError && /no run\.json/.test(e.message));
});

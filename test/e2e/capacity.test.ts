// The knee of a ramp, end to end through the built CLI on the embedded engine: workloads/capacity-knee.yaml
// (conversations arriving at 1, 4, 8 and 12 a second, 12 s a stage) must name its knee in summary.json, the
// terminal and report.html. The machine may be loaded, so the test asserts that a knee is named and agrees with
// the stage figures it rests on, not which stage it is — except that 12 a second is past the engine's capacity
// (24 streams at 8 ms + 0.4 ms a running stream a step: about 1,360 tokens/s at best, and 12 conversations a second
// ask for about as much), so some stage of the ramp must be past the knee.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Summary } from '../../src/analysis/index.js';
import { runCli, tempDir } from '../helpers/tmp.js';

test('a short ramp on the embedded engine names its knee and the first stage past it, with why, in summary.json, the terminal and report.html', { timeout: 300_000 }, async (t) => {
  const out = join(tempDir(t), 'run');
  const r = await runCli(['run', 'workloads/capacity-knee.yaml', '--out', out], { timeoutMs: 280_000 });
  assert.ok(r.code === 0 || r.code === 1, `run exits 0 or 1 (thresholds), got ${r.code} ${r.signal}: ${r.stderr.slice(-2000)}`);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const c = s.capacity;
  assert.ok(c !== undefined, 'summary.json has capacity');
  assert.equal(c.unit, 'rate_per_s');
  assert.deepEqual(
    c.stages.map((st) => [st.phase, st.rate_per_s]),
    [
      ['s1-r1', 1],
      ['s2-r4', 4],
      ['s3-r8', 8],
      ['s4-r12', 12],
    ],
  );
  assert.ok(c.past !== null, `12 conversations a second is past the engine's capacity: ${JSON.stringify(c.stages.map((st) => [st.phase, st.ttft?.p50_ms, st.throughput]))}`);

  // The knee agrees with the stages: every stage up to it held, the one after it did not, for the reasons given.
  const pastIndex = c.stages.findIndex((st) => st.phase === c.past!.phase);
  assert.ok(
    c.stages.slice(0, pastIndex).every((st) => st.holds && st.reasons.length === 0),
    'every stage before the first past it held',
  );
  assert.equal(c.stages[pastIndex]!.holds, false);
  const knee = c.knee;
  assert.deepEqual(knee, pastIndex === 0 ? null : { phase: c.stages[pastIndex - 1]!.phase, rate_per_s: c.stages[pastIndex - 1]!.rate_per_s });
  assert.ok(c.past.reasons.length > 0);
  assert.deepEqual(c.past.reasons, c.stages[pastIndex]!.reasons);
  const base = c.stages[0]!;
  for (const st of c.stages) {
    assert.ok(st.requests > 0 && st.ttft !== null && st.ttft.count > 0, `${st.phase} has TTFT samples`);
    assert.ok(st.ttft.p50_low_ms <= st.ttft.p50_ms && st.ttft.p50_ms <= st.ttft.p50_high_ms, `${st.phase}: p50 inside its interval`);
    assert.ok(st.throughput.windows >= 2 && st.throughput.se !== null, `${st.phase}: throughput over its windows (2 s each)`);
    for (const reason of st.reasons) {
      // Each reason is true of the figures summary.json gives beside it.
      if (reason.kind === 'queueing') assert.ok(st.ttft.p50_low_ms > base.ttft!.p99_ms, `${st.phase} queueing: ${reason.text}`);
      if (reason.kind === 'errors') assert.ok(st.errors + st.hangs > 0);
      if (reason.kind === 'start_lag') assert.ok((st.delayed ?? 0) > 0 || st.lagging === true);
      if (reason.kind === 'throughput_flat') {
        const prev = c.stages[c.stages.indexOf(st) - 1]!;
        assert.ok(st.throughput.output_tokens_per_s - prev.throughput.output_tokens_per_s <= 1.96 * Math.hypot(st.throughput.se, prev.throughput.se!) + 0.01, reason.text);
      }
    }
  }
  // The embedded deployment is monitored: the gauges of the stage past the knee are there, not "not reported".
  assert.ok(c.past.gauges !== null && c.past.gauges.some((g) => g.queue_max !== null), 'engine queue gauges at the stage past the knee');

  // The terminal names it (the summary goes to stdout).
  const kneeText = c.knee === null ? 'no stage held' : `capacity   knee ${c.knee.phase} (${c.knee.rate_per_s} conv/s)`;
  assert.ok(c.knee === null || c.stages.some((st) => st.phase === c.knee!.phase && st.holds));
  assert.ok(r.stdout.includes(kneeText), `terminal: ${kneeText}`);
  assert.ok(r.stdout.includes(`past it ${c.past.phase} (${c.past.rate_per_s} conv/s): ${c.past.reasons.map((x) => x.kind).join(', ')}`));
  // report.html draws the chart, the knee marked.
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /data-chart="capacity"/);
  assert.match(html, /<section id="capacity">/);
  // And its verdict bar says where the knee is.
  const bar = c.knee === null ? 'knee</a> <b>below the first stage</b>' : `knee</a> <b>${c.knee.rate_per_s} conv/s (${c.knee.phase})</b> · past it: ${c.past.reasons.map((x) => x.kind).join(', ')}`;
  assert.ok(html.includes(bar), bar);
});

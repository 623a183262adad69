// Issue 43's targets through the CLI: a CSV of seeded synthetic histories (12 nights of a latency figure at 3%
// noise: some 10% worse from night 11, some A/A with independent or drifting nights), one workload each, run
// through `roundload trend FILE.csv --all --fail-on regression --json` as a nightly job would. Every workload's
// alert is the one the simulation (buildTrendOfValues, what bench/trend-power.ts measures on 2,000 histories a
// cell) finds on the same numbers, and the shares flagged sit within the 99% interval of the bench's figures
// for this many histories. The full number of histories goes through the CLI in the bench.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTrendOfValues, metricOf } from '../../src/trend/index.js';
import { Rng } from '../../src/util/index.js';
import { alertIndexOfJson, alertIndexOfTrend, nights, nightsCsv, NIGHTS_FIGURE, type AlertJson } from '../helpers/nights.js';
import { runCli, tempDir } from '../helpers/tmp.js';

/** The night index the worsening begins at (night 11 of 12). */
const C = 10;

interface Kind {
  name: string;
  rho: number;
  step: number;
  count: number;
  /** The bench's figure (docs/history.md): flagged by the 2nd night at c or c − 1; A/A, an alert at c. */
  measured: number;
}

const KINDS: Kind[] = [
  { name: 'worse', rho: 0, step: 0.1, count: 40, measured: 0.854 },
  { name: 'aa', rho: 0, step: 0, count: 30, measured: 0.009 },
  { name: 'aa-drift', rho: 0.6, step: 0, count: 30, measured: 0.012 },
];

/** Whether a workload's alert counts: the worsening flagged at c or c − 1; A/A, an alert on the newest two nights (at c). */
const counts = (kind: Kind, at: number | null): boolean => (kind.step === 0 ? at === C : at === C || at === C - 1);

/** Half the width of a 99% interval of a share near `p` over `n` histories, and one history for the discreteness. */
const halfWidth = (p: number, n: number): number => 2.576 * Math.sqrt((p * (1 - p)) / n) + 1 / n;

test('a CSV of 100 synthetic 12-night histories through trend --all --fail-on regression --json: each alert as simulated, 10% worse flagged by the 2nd night and A/A alerts within the bench measure', async (t) => {
  const rng = new Rng(43);
  const histories = KINDS.flatMap((k) => Array.from({ length: k.count }, (_, i) => ({ kind: k, workload: `${k.name}-${i + 1}`, values: nights(rng, C + 2, k.rho, 0.03, k.step, C) })));
  const dir = tempDir(t);
  const csv = join(dir, 'synthetic.csv');
  writeFileSync(csv, nightsCsv(histories));

  const res = await runCli(['trend', csv, '--all', '--fail-on', 'regression', '--json', '--out', join(dir, 'trend.html')], { timeoutMs: 120_000 });
  assert.equal(res.code, 1, res.stderr);
  const workloads = (JSON.parse(res.stdout) as { workloads: AlertJson[] }).workloads;
  assert.equal(workloads.length, histories.length);

  const metric = metricOf(NIGHTS_FIGURE)!;
  for (const kind of KINDS) {
    let flagged = 0;
    for (const h of histories.filter((x) => x.kind === kind)) {
      const w = workloads.find((x) => x.workload === h.workload)!;
      const runs = h.values.map((_, i) => ({ runId: `night-${i + 1}`, startedAt: null, labels: {}, dir: null }));
      const simulated = alertIndexOfTrend(buildTrendOfValues('csv', runs, [{ metric, values: [...h.values] }]));
      assert.equal(alertIndexOfJson(w), simulated, `${h.workload}: the CLI's alert is the simulation's`);
      if (counts(kind, simulated)) flagged += 1;
    }
    const share = flagged / kind.count;
    t.diagnostic(`${kind.name}: ${flagged} of ${kind.count} (${(100 * share).toFixed(1)}%), the bench ${(100 * kind.measured).toFixed(1)}%`);
    assert.ok(Math.abs(share - kind.measured) <= halfWidth(kind.measured, kind.count), `${kind.name}: ${share} against ${kind.measured}`);
  }
});

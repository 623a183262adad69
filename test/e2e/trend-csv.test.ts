// `roundload trend FILE.csv` through the CLI, as a nightly job elsewhere would run it on its own numbers: a CSV
// of two synthetic workloads (one 10% slower from night 11 of 12, one A/A), `--all` with one exit code for
// `--fail-on`, the `--json` contract, a step suspected on its first night and confirmed on its second, runs in
// the order of a `time` column, and a bad file refused with its line and column (exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/tmp.js';

/** Night-to-night wobble of ±1.5% (fixed, so the test is the same every time). */
const WOBBLE = [0.6, -1.4, 1.1, -0.3, 1.5, -0.9, 0.2, -1.2, 0.8, 1.3, -0.6, 0.4];

/** Lines of one workload: ITL p50 (ms, lower is better) and output tok/s (higher is better), `slower` from night `stepAt` (1-based). */
function lines(workload: string, nights: number, stepAt: number | null): string[] {
  return WOBBLE.slice(0, nights).map((w, i) => {
    const slow = stepAt !== null && i + 1 >= stepAt ? 1.1 : 1;
    const day = String(i + 1).padStart(2, '0');
    return `${workload},c${day},2026-12-${day}T02:00:00Z,${(6 * slow * (1 + w / 100)).toFixed(3)},${((500 / slow) * (1 - w / 100)).toFixed(1)}`;
  });
}

const HEADER = 'workload,run,time,itl_p50,output_tok_s';

interface Contract {
  version: number;
  regression: boolean;
  workloads: {
    workload: string;
    runs: number;
    regression: boolean;
    change_points: { figure: string; run: string; run_number: number; change_pct: number; p_value: number; worse: boolean; recent: boolean; test: string }[];
    suspected: { figure: string; run: string; worse: boolean }[];
  }[];
}

test('a CSV of two workloads: the one 10% slower from night 11 is flagged on night 12 (exit 1 for --all), the A/A one is not; --json holds the contract', async (t) => {
  const dir = tempDir(t);
  const csv = join(dir, 'nightly.csv');
  writeFileSync(csv, [HEADER, ...lines('chat-soak', 12, 11), ...lines('steady', 12, null)].join('\n') + '\n');
  const html = join(dir, 'trend.html');

  const all = await runCli(['trend', csv, '--all', '--fail-on', 'regression', '--out', html]);
  assert.equal(all.code, 1, all.stderr);
  assert.match(all.stdout, /^roundload trend · .*nightly\.csv · chat-soak · phase csv · 12 runs, 2026-12-01 → 2026-12-12/m);
  assert.match(all.stdout, /^itl_p50 ms .* run 11 \(2026-12-11, c11\): \+\d+\.\d% regression, (?:p=0\.0\d\d|p<0\.001), confirmed by its second night$/m);
  assert.match(all.stdout, /^roundload trend · .*nightly\.csv · steady · /m);
  assert.match(all.stdout, /no regression starts in the newest 5 runs/);
  assert.ok(readFileSync(html, 'utf8').includes('trend-w1-itl_p50'), 'one page, a section per workload');

  const steady = await runCli(['trend', csv, '--name', 'steady', '--fail-on', 'regression', '--out', html]);
  assert.equal(steady.code, 0, steady.stdout);

  const json = await runCli(['trend', csv, '--all', '--json', '--out', html]);
  assert.equal(json.code, 0, json.stderr);
  const contract = JSON.parse(json.stdout) as Contract;
  assert.equal(contract.version, 1);
  assert.equal(contract.regression, true);
  const [stepped, aa] = contract.workloads;
  assert.deepEqual([stepped!.workload, stepped!.runs, stepped!.regression, aa!.workload, aa!.regression], ['chat-soak', 12, true, 'steady', false]);
  assert.deepEqual(
    stepped!.change_points.map((c) => [c.figure, c.run, c.run_number, c.worse, c.recent, c.test]),
    [
      ['itl_p50', 'c11', 11, true, true, 'newest-nights'],
      ['output_tok_s', 'c11', 11, true, true, 'newest-nights'],
    ],
  );
  const [itl, tokens] = stepped!.change_points;
  assert.ok(itl!.change_pct > 8 && itl!.change_pct < 12 && tokens!.change_pct < -8 && tokens!.change_pct > -12, JSON.stringify(stepped));
  assert.ok(itl!.p_value <= 0.02);
  assert.deepEqual(aa!.change_points, []);
});

test('the night the step appears it is suspected, not acted on (exit 0); rows out of order are put in the order of the time column', async (t) => {
  const dir = tempDir(t);
  const csv = join(dir, 'eleven.csv');
  const rows = lines('chat-soak', 11, 11);
  writeFileSync(csv, [HEADER, ...rows.slice(5), ...rows.slice(0, 5)].join('\r\n'));
  const res = await runCli(['trend', csv, '--json', '--fail-on', 'regression', '--out', join(dir, 'trend.html')]);
  assert.equal(res.code, 0, res.stderr);
  const contract = JSON.parse(res.stdout) as Contract;
  assert.deepEqual(contract.workloads[0]!.change_points, []);
  assert.deepEqual(
    contract.workloads[0]!.suspected.map((s) => [s.figure, s.run, s.worse]),
    [
      ['itl_p50', 'c11', true],
      ['output_tok_s', 'c11', true],
    ],
  );
});

test('a bad CSV is one located line and exit 2: an unknown column, a cell that is not a number, a missing run column', async (t) => {
  const dir = tempDir(t);
  const cases: [string, RegExp][] = [
    ['workload,run,itl_p50,ttft_p95\nw,r1,6.1,90\n', /bad\.csv:1:22: unknown column "ttft_p95": workload, run, time or a figure as trend --metric names it/],
    ['workload,run,itl_p50\nw,r1,6.1\nw,r2,six\n', /bad\.csv:3:6: "six" is not a number/],
    ['workload,itl_p50\nw,6.1\n', /bad\.csv:1:1: the header has no "run" column/],
    ['workload,run,time,itl_p50\nw,r1,yesterday,6.1\n', /bad\.csv:2:6: "yesterday" is not a time/],
  ];
  for (const [text, expected] of cases) {
    const file = join(dir, 'bad.csv');
    writeFileSync(file, text);
    const res = await runCli(['trend', file, '--out', join(dir, 'trend.html')]);
    assert.equal(res.code, 2, res.stdout);
    assert.match(res.stderr, expected);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  }
});

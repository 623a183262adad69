// The figures table (types/figures.ts) against what takes its lists from it and what it names: the history's
// latest schema, summary.json, the histograms, compare's figures, trend's metrics, the terminal and report.html.
// A figure's history column or A/B family removed in one place and not the other fails here (or, for a family
// no figure claims and an A/B figure without a value, the build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import {
  AB_FAMILIES,
  AB_FIGURE_LIST,
  AB_SERIES,
  FIGURES,
  HISTORY_FIGURE_COLUMNS,
  HISTORY_SHOW_COLUMNS,
  LATENCY_FIGURES,
  PERCENTILES,
  ROUND_CHARTS,
  TREND_FIGURES,
  tableColumns,
  type FigureName,
} from '../../src/types/index.js';
import { MIGRATIONS } from '../../src/history/schema.js';
import { historyRunFromFolder } from '../../src/history/index.js';
import { LATENCY_METRICS } from '../../src/metrics/index.js';
import { FIGURE_SPECS } from '../../src/compare/figures.js';
import { DEFAULT_METRICS, TREND_METRICS } from '../../src/trend/index.js';
import { formatSummary } from '../../src/report/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { tempDir } from '../helpers/tmp.js';
import { runFolder } from '../history/fixtures.js';

/** The latest schema's `figures` table: column name → declared type. */
function latestFigureColumns(): Map<string, string> {
  const db = new Database(':memory:');
  try {
    for (const migration of MIGRATIONS) db.exec(migration);
    const columns = db.prepare('SELECT name, type FROM pragma_table_info(?)').all('figures') as { name: string; type: string }[];
    return new Map(columns.map((c) => [c.name, c.type]));
  } finally {
    db.close();
  }
}

test("every figure's history column is in the latest schema, and every REAL column of its figures table is some figure's", () => {
  const columns = latestFigureColumns();
  for (const column of HISTORY_FIGURE_COLUMNS) assert.ok(columns.has(column), `the latest schema has ${column}: a new column needs a new migration`);
  const real = [...columns].filter(([, type]) => type === 'REAL').map(([name]) => name);
  assert.deepEqual(
    real.filter((c) => !HISTORY_FIGURE_COLUMNS.includes(c)),
    [],
    'a schema column no figure claims: its figure lost its history column',
  );
  assert.equal(new Set(HISTORY_FIGURE_COLUMNS).size, HISTORY_FIGURE_COLUMNS.length, 'no column claimed twice');
});

test("a run's history rows fill exactly the figures table's columns, every latency percentile from summary.json", async (t) => {
  const rows = historyRunFromFolder(await runFolder(join(tempDir(t), 'r1'), { startedAt: '2026-12-01T02:00:00.000Z' }));
  const columns = [...latestFigureColumns().keys()];
  for (const row of rows.figures) assert.deepEqual(Object.keys(row).sort(), [...columns].sort());
  const phase = rows.figures.find((r) => r.round === 0)!;
  // The fixture's requests have a TTFT, gaps and an end (no content token, no usage: no TTFC, no TPOT).
  for (const name of ['ttft', 'itl', 'e2e'] as const) for (const p of FIGURES[name].history) assert.equal(typeof phase[`${name}_${p}_ms`], 'number', `${name}_${p}_ms written`);
});

test("a latency figure's name is its summary.json key and its histograms' metric; a value figure says where summary.json has it", async (t) => {
  assert.deepEqual([...LATENCY_FIGURES].sort(), [...LATENCY_METRICS].sort());
  const dir = await runFolder(join(tempDir(t), 'r1'), { startedAt: '2026-12-01T02:00:00.000Z' });
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Summary;
  const phase = summary.phases[0]!;
  for (const name of LATENCY_FIGURES) assert.equal(typeof phase[name]?.p50_ms, 'number', `phases[].${name}`);
  assert.equal(typeof phase.output_tokens_per_s, 'number');
  assert.equal(typeof phase.rounds[0]!.stream_tokens_per_s_mean, 'number');
  assert.equal(typeof summary.totals.error_rate, 'number');
  assert.equal(typeof phase.hangs, 'number');
});

test("every headline family of the ab file's stopping rule is exactly one A/B figure's; compare judges the table's figures in its order, each with a value", () => {
  for (const family of AB_FAMILIES) assert.equal(AB_FIGURE_LIST.filter((f) => f.family === family).length, 1, family);
  assert.deepEqual(
    FIGURE_SPECS.map((s) => [s.figure, s.label, s.betterWhen, s.kind, s.family]),
    AB_FIGURE_LIST.map((f) => [f.figure, f.label, f.betterWhen, f.kind, f.family]),
  );
  for (const spec of FIGURE_SPECS) assert.equal(typeof spec.value, 'function', spec.figure);
  // compare.json's figures, as before the table (their order is compare's tables' and the stopping rule's).
  assert.deepEqual(
    FIGURE_SPECS.map((s) => `${s.figure}|${s.label}|${s.family ?? '-'}`),
    [
      'decode_tokens_per_s|decode tok/s|decode',
      'ttft_p50_ms|ttft p50 ms|ttft',
      'ttft_p99_ms|ttft p99 ms|-',
      'ttfc_p50_ms|ttfc p50 ms|-',
      'ttfc_p99_ms|ttfc p99 ms|-',
      'itl_p50_ms|itl p50 ms|itl',
      'itl_p99_ms|itl p99 ms|-',
      'tpot_p50_ms|tpot p50 ms|-',
      'tpot_p99_ms|tpot p99 ms|-',
      'e2e_p50_ms|e2e p50 ms|e2e',
      'e2e_p99_ms|e2e p99 ms|-',
      'error_rate|errors+hangs %|errors',
    ],
  );
  assert.deepEqual(
    FIGURE_SPECS.filter((s) => s.betterWhen === 'higher').map((s) => s.figure),
    ['decode_tokens_per_s'],
  );
  assert.deepEqual(
    FIGURE_SPECS.filter((s) => s.kind === 'absolute').map((s) => s.figure),
    ['error_rate'],
  );
});

test('a trend follows every latency column of the history and each value figure, reading a column of the latest schema or computing it', () => {
  const columns = latestFigureColumns();
  assert.deepEqual(
    TREND_METRICS.map((m) => m.name),
    TREND_FIGURES.map((f) => f.name),
  );
  for (const f of TREND_FIGURES) if (f.column !== null) assert.ok(columns.has(f.column), `${f.name} reads ${f.column}`);
  const latencies = LATENCY_FIGURES.flatMap((n) => FIGURES[n].history.map((p) => `${n}_${p}`));
  assert.deepEqual(
    TREND_METRICS.map((m) => m.name),
    [...latencies, 'output_tok_s', 'stream_tok_s', 'error_rate', 'hangs'],
  );
  const row = { requests: 10, errors: 1, hangs: 2, output_tokens_per_s: 99, stream_tokens_per_s: 40, ttft_p99_ms: 12 };
  const value = (name: string) => TREND_METRICS.find((m) => m.name === name)!.value(row);
  assert.deepEqual([value('error_rate'), value('hangs'), value('output_tok_s'), value('ttft_p99'), value('ttft_p50')], [10, 2, 99, 12, null]);
  assert.deepEqual(DEFAULT_METRICS, ['ttft_p50', 'ttft_p99', 'ttfc_p99', 'itl_p50', 'itl_p99', 'tpot_p50', 'e2e_p50', 'e2e_p99', 'output_tok_s', 'stream_tok_s', 'error_rate', 'hangs']);
  for (const [name, f] of Object.entries(FIGURES))
    if (f.kind === 'latency') for (const p of f.trendDefault) assert.ok(f.history.includes(p as never), `${name} ${p}: a default trend needs its column`);
});

test("the terminal's and report.html's latency columns, round charts, compare.html's charts per window and history show are the table's", async (t) => {
  assert.deepEqual(
    tableColumns('rounds').map((c) => c.terminal),
    ['ttft p50', 'ttft p99', 'itl p50', 'itl p99', 'e2e p50', 'e2e p99'],
  );
  assert.deepEqual(
    tableColumns('decode').map((c) => c.label),
    ['reasoning p50', 'TTFT p50', 'TTFC p50', 'TTFC p99', 'ITL p50', 'TPOT p50', 'TPOT p99'],
  );
  assert.deepEqual(
    ROUND_CHARTS.map((c) => c.title),
    ['TTFT', 'TTFC (first content)', 'ITL', 'TPOT', 'end to end'],
  );
  assert.deepEqual(
    AB_SERIES.map((c) => `${c.id}|${c.title}|${c.yLabel}`),
    ['tokens|Decode tokens/s per window|output tokens/s', 'ttft|TTFT p50 per window|ms', 'e2e|End-to-end p50 per window|ms'],
  );
  assert.deepEqual(HISTORY_SHOW_COLUMNS, ['ttft_p50_ms', 'ttft_p99_ms', 'ttfc_p99_ms', 'itl_p50_ms', 'itl_p99_ms', 'e2e_p50_ms', 'e2e_p99_ms']);
  const dir = await runFolder(join(tempDir(t), 'r1'), { startedAt: '2026-12-01T02:00:00.000Z' });
  const text = formatSummary(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Summary, dir);
  for (const table of ['rounds', 'decode'] as const) {
    const heads = tableColumns(table).map((c) => c.terminal);
    assert.ok(
      text.split('\n').some((line) => heads.every((h) => line.includes(h))),
      `the terminal has a table headed ${heads.join(', ')}`,
    );
  }
});

test('every figure has a unit, a direction and a meaning; a latency is kept at the percentiles the history has', () => {
  for (const name of Object.keys(FIGURES) as FigureName[]) {
    const f = FIGURES[name];
    assert.ok(f.means.length > 10 && f.label.length > 0, name);
    assert.equal(f.worse, f.unit === 'tok/s' ? 'down' : 'up', `${name}: a throughput going down is worse, anything else going up`);
    if (f.kind === 'latency') for (const p of [...f.history, ...f.rounds, ...f.decode]) assert.ok(PERCENTILES.includes(p), `${name} ${p}`);
  }
});

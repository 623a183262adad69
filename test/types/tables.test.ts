// The typed tables of names (types/server-families.ts, types/verdicts.ts, types/figures.ts) against what is
// derived from them and against the docs' tables, so a family, a verdict or a figure added in one place and not
// the other fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_MONITOR_COUNTERS, DEFAULT_MONITOR_GAUGES } from '../../src/config/index.js';
import {
  AB_FAMILIES,
  AB_SERIES,
  baseName,
  DIAGNOSIS_CANDIDATES,
  DIAGNOSIS_VERDICTS,
  FIGURES,
  KEY_GAUGES,
  QUEUE_GAUGES,
  RUNNING_GAUGES,
  SERVER_FAMILIES,
  TOKEN_COUNTERS,
  TREND_FIGURES,
  latencyColumn,
  type FigureName,
  type LatencyFigureName,
} from '../../src/types/index.js';
import { diagnosisMeaning } from '../../src/report/table.js';

const docRows = (file: string, header: string): string[][] => {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  assert.ok(start >= 0, `${file} has the table starting "${header}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
};

test("every server family's prefix is stripped, and its gauges and counters are kept by default", () => {
  for (const [name, family] of Object.entries(SERVER_FAMILIES)) {
    if (family.prefix !== '') assert.equal(baseName(`${family.prefix}x_total`), 'x_total', name);
    for (const [gauge] of [...family.running, ...family.queue, ...family.handoff]) assert.ok(DEFAULT_MONITOR_GAUGES.includes(gauge), `${name}: ${gauge} kept`);
    for (const [counter] of family.tokens) assert.ok(DEFAULT_MONITOR_COUNTERS.includes(counter), `${name}: ${counter} kept`);
  }
  assert.equal(baseName('tgi_queue_size'), 'tgi_queue_size');
  assert.ok(RUNNING_GAUGES.has('num_requests_running') && QUEUE_GAUGES.has('requests_deferred') && !QUEUE_GAUGES.has('num_running_reqs'));
});

test('token counters are ranked by how they move: while streams run, at the end of a request, prompts last', () => {
  assert.deepEqual(TOKEN_COUNTERS, [
    'realtime_tokens_total',
    'n_decode_total',
    'tgi_batch_inference_count',
    'generation_tokens_total',
    'tokens_predicted_total',
    'tgi_request_generated_tokens_sum',
    'prompt_tokens_total',
  ]);
  assert.deepEqual([...new Set(KEY_GAUGES.map(([, short]) => short))], ['running', 'queue', 'bootstrap', 'inflight', 'transfer']);
});

test("docs/monitor.md's family table lists each family's prefix, token counters and running / waiting gauges as the table declares them", () => {
  const rows = docRows('docs/monitor.md', '| family | prefix |');
  const families = Object.values(SERVER_FAMILIES).filter((f) => f.tokens.length > 0);
  assert.equal(rows.length, families.length, 'one row per family with flow counters');
  families.forEach((family, i) => {
    const [, prefix, counters, gauges] = rows[i]!;
    assert.equal(prefix!.includes(family.prefix === '' ? 'in the name' : `\`${family.prefix}\``), true, `row ${i + 1} prefix`);
    for (const [counter] of family.tokens) assert.ok(counters!.includes(`\`${counter}\``), `row ${i + 1} names ${counter}`);
    for (const counter of family.requests) assert.ok(counters!.includes(`\`${counter}\``), `row ${i + 1} names ${counter}`);
    assert.equal(gauges, `\`${family.running[0][0]}\` / \`${family.queue[0]![0]}\``, `row ${i + 1} running / waiting`);
  });
});

test("docs/diagnosis.md's verdict table has a row for every verdict the diagnosis scores, and unknown; each has a meaning", () => {
  const rows = docRows('docs/diagnosis.md', '| verdict | means |').map((r) => r[0]!.replaceAll('`', ''));
  assert.deepEqual(rows, [...DIAGNOSIS_CANDIDATES, 'unknown']);
  for (const verdict of Object.keys(DIAGNOSIS_VERDICTS) as (keyof typeof DIAGNOSIS_VERDICTS)[]) {
    assert.ok(DIAGNOSIS_VERDICTS[verdict].meaning.length > 10, verdict);
    assert.equal(diagnosisMeaning({ verdict }), verdict === 'none' ? '' : DIAGNOSIS_VERDICTS[verdict].meaning);
  }
});

/** A figure's row of docs/results.md's figures table, as the table declares it. */
function figureDocRow(name: FigureName): string[] {
  const f = FIGURES[name];
  const code = (xs: readonly string[]) => (xs.length === 0 ? '—' : xs.map((x) => `\`${x}\``).join(', '));
  const trend = TREND_FIGURES.filter((t) => t.figure === name).map((t) => (t.default ? `**\`${t.name}\`**` : `\`${t.name}\``));
  const withFamily = (figure: string, family: string | null) => `\`${figure}\`${family === null ? '' : ` (\`${family}\`)`}`;
  const series = AB_SERIES.some((c) => c.figure === name) ? '; a chart per window in compare.html' : '';
  const cells = (shown: string, history: readonly string[], ab: readonly string[]) => [
    `\`${name}\``,
    f.means,
    f.unit,
    f.worse === 'up' ? 'higher' : 'lower',
    shown,
    code(history),
    trend.join(', ') || '—',
    ab.length === 0 ? '—' : `${ab.join(', ')}${series}`,
  ];
  if (f.kind === 'value') return cells(f.shown, f.history === null ? [] : [f.history], f.ab === null ? [] : [withFamily(f.ab.figure, f.ab.family)]);
  const latency = name as LatencyFigureName;
  const shown = [
    f.rounds.length > 0 ? `per-round table ${f.rounds.join(', ')}` : null,
    f.decode.length > 0 ? `decode table ${f.decode.join(', ')}` : null,
    f.chart === null ? null : 'a chart by round',
  ];
  return cells(
    shown.filter((x) => x !== null).join('; '),
    f.history.map((p) => latencyColumn(latency, p)),
    (Object.entries(f.ab) as [Parameters<typeof latencyColumn>[1], string | null][]).map(([p, family]) => withFamily(latencyColumn(latency, p), family)),
  );
}

test("docs/results.md's figures table has a row for every figure, as types/figures.ts declares it", () => {
  const expected = (Object.keys(FIGURES) as FigureName[]).map(figureDocRow);
  if (process.env.PRINT_FIGURE_ROWS === '1') process.stdout.write(`${expected.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  assert.deepEqual(docRows('docs/results.md', '| figure | what it is | unit | worse when |'), expected);
});

test("docs/history.md's default trend figures and docs/ab.md's headline families are the table's", () => {
  const history = readFileSync('docs/history.md', 'utf8').replace(/\s+/g, ' ');
  const defaults = TREND_FIGURES.filter((f) => f.default).map((f) => f.name);
  assert.ok(history.includes(`by default \`${defaults.join(' ')}\``), `docs/history.md lists the default figures ${defaults.join(' ')}`);
  const ab = readFileSync('docs/ab.md', 'utf8');
  const lists = [...ab.matchAll(/figures: \[([a-z, ]+)\]/g)].map((m) => m[1]!.split(', '));
  assert.ok(lists.length >= 2, 'docs/ab.md shows the default until.figures');
  for (const list of lists) for (const family of list) assert.ok((AB_FAMILIES as readonly string[]).includes(family), `docs/ab.md: ${family} is a family`);
  assert.ok(ab.includes(`figures: [${AB_FAMILIES.join(', ')}]`), 'docs/ab.md gives the default, every family in order');
});

// What an A/B shows besides the comparison tables, all from the same calls: the log's lines after every pair,
// compare.html's head (the rule, why it ended, each headline figure's interval narrowing pair by pair against
// ±min_effect) and junit.xml (a test case per figure, failed when it ends `worse`). Pure.
import type { ChartSpec } from '../report/index.js';
import { esc, xmlEscape } from '../report/index.js';
import type { Comparison, FigureRow } from './compare.js';

/** The rule and the end of an A/B, as its outputs name them. */
export interface AbSummary {
  looks: 'sequential' | 'fixed';
  minEffectPct: number;
  minEffectPoints: number;
  maxPairs: number;
  alpha: number;
  pairs: number;
  ended: string;
}

/** A figure's name in one comparison: `main decode tok/s` (with the arm when there are several). */
function figureName(c: Comparison, phase: string, row: FigureRow, several: boolean): string {
  return `${several ? `${c.b.name}: ` : ''}${phase} ${row.label.replace(/ ms$/, '')}`;
}

/** The headline figures (those of the stopping rule's families) of every comparison. */
function headline(comparisons: readonly Comparison[]): { c: Comparison; phase: string; row: FigureRow; name: string }[] {
  const several = comparisons.length > 1;
  return comparisons.flatMap((c) => c.phases.flatMap((p) => p.rows.filter((r) => r.family !== null).map((row) => ({ c, phase: p.phase, row, name: figureName(c, p.phase, row, several) }))));
}

function unit(row: FigureRow): string {
  return row.kind === 'relative' ? ' (%)' : ' (points)';
}

/** The log's and terminal's lines: a headline figure a line with its call. */
export function callLines(comparisons: readonly Comparison[]): string[] {
  const figures = headline(comparisons);
  const width = Math.max(0, ...figures.map((f) => f.name.length));
  return figures.map((f) => `  ${f.name.padEnd(width)}  ${f.row.text}${unit(f.row)}`);
}

/** One chart per headline figure: the estimate and its interval after each pair, and the margin either side. */
export function pairCharts(comparisons: readonly Comparison[], run: AbSummary): ChartSpec[] {
  return headline(comparisons).map((f, i) => {
    // One point a look (pair), the call kept after it was made drawn flat.
    const looks = f.row.calls.map((call, k) => ({ call, look: k + 1 })).filter((l) => l.call.estimate !== null);
    const calls = looks.map((l) => l.call);
    const x = looks.map((l) => l.look);
    const margin = f.row.kind === 'relative' ? run.minEffectPct : run.minEffectPoints;
    return {
      id: `pairs-${i}`,
      title: `${f.name}: ${f.row.verdict} · ${f.c.b.name} vs ${f.c.a.name}`,
      x_kind: 'round',
      x_label: 'pairs',
      y_label: `B − A${f.row.kind === 'relative' ? '%' : ' pt'}`,
      y2_label: null,
      x,
      series: [
        { label: 'estimate', values: calls.map((c) => c.estimate), color: '#111827', dots: true },
        { label: 'interval low', values: calls.map((c) => c.low), color: '#2563eb' },
        { label: 'interval high', values: calls.map((c) => c.high), color: '#2563eb' },
        { label: `+${margin} (margin)`, values: x.map(() => margin), color: '#9ca3af' },
        { label: `−${margin} (margin)`, values: x.map(() => -margin), color: '#9ca3af' },
      ],
      markers: [],
      note: `the interval after each pair${run.looks === 'sequential' ? ', valid however often it was looked at' : ''}; ${f.row.betterWhen} is better; a call once made is kept`,
    };
  });
}

/** In words: the rule the calls were made by. */
export function ruleText(run: AbSummary): string {
  const margins = `min_effect ±${run.minEffectPct}% (±${run.minEffectPoints} point${run.minEffectPoints === 1 ? '' : 's'} for rates)`;
  const alpha = run.alpha < 0.05 ? `, alpha ${run.alpha.toFixed(4)} per arm (0.05 split over the arms)` : '';
  return run.looks === 'sequential'
    ? `stopping rule: pairs until every figure waited for is better, worse or equivalent, at most ${run.maxPairs}; ${margins}; intervals valid however often they were looked at${alpha}`
    : `${run.maxPairs} pairs (repeats), judged once at a fixed-sample level; ${margins}${alpha}`;
}

/** compare.html's section above the comparison tables. */
export function abHtml(comparisons: readonly Comparison[], run: AbSummary): string {
  const rows = headline(comparisons).map((f) => {
    const v = f.row.verdict;
    const cls = v === 'better' ? 'better' : v === 'worse' ? 'worse' : v === 'equivalent' ? '' : 'insufficient';
    return `<tr><td>${esc(f.name)}</td><td class="v ${cls}">${esc(v)}</td><td class="t">${esc(f.row.text + unit(f.row))}</td></tr>`;
  });
  return [
    `<h1>A/B: ${esc(comparisons.map((c) => `${c.b.name} vs ${c.a.name}`).join(', '))}</h1>`,
    `<p class="meta">${esc(ruleText(run))}. Ended after ${run.pairs} pair${run.pairs === 1 ? '' : 's'}: ${esc(run.ended)}. Each run is one value per figure; every verdict on this page, in the terminal, ab.log, compare.json and junit.xml is the same call (docs/ab.md).</p>`,
    `<table><tr><th>figure</th><th>call</th><th>after the last pair</th></tr>${rows.join('')}</table>`,
  ].join('\n');
}

/** junit.xml of an A/B: a test case per figure and phase of every arm; one ending `worse` fails. */
export function abJunit(comparisons: readonly Comparison[], run: AbSummary): string {
  const cases: string[] = [];
  let failures = 0;
  for (const c of comparisons) {
    const suite = `roundload.ab.${c.b.name}-vs-${c.a.name}`;
    for (const p of c.phases) {
      for (const row of p.rows) {
        const name = `${p.phase} ${row.label}`;
        const open = `    <testcase classname="${xmlEscape(suite)}" name="${xmlEscape(name)}" time="0"`;
        if (row.verdict !== 'worse') {
          cases.push(`${open}/>`);
          continue;
        }
        failures += 1;
        const detail = `${c.b.name} against ${c.a.name}, ${ruleText(run)}: ${row.text}`;
        cases.push(`${open}>\n      <failure type="worse" message="${xmlEscape(`${name}: ${row.text}`)}">${xmlEscape(detail)}</failure>\n    </testcase>`);
      }
    }
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="roundload" tests="${cases.length}" failures="${failures}" errors="0">`,
    `  <testsuite name="roundload.ab" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

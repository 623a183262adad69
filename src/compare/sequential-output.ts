// What a sequential A/B shows besides the terminal: in compare.html a table of the calls and, per figure,
// the interval narrowing pair by pair against ±min_effect; and junit.xml, one test case per figure, failed
// when it ends `worse` (past the margin: `worse` is only ever called there). Pure.
import type { ChartSpec } from '../report/index.js';
import { esc, xmlEscape } from '../report/index.js';
import type { FigureCalls } from './ab-sequential.js';

/** The rule and arms a sequential A/B ran with, as its outputs name them. */
export interface SequentialRun {
  figures: readonly FigureCalls[];
  minEffectPct: number;
  maxPairs: number;
  a: string;
  b: string;
}

function unitOf(f: FigureCalls): string {
  return f.kind === 'points' ? ' pt' : '%';
}

/** One chart per figure: the estimate and its interval after each pair, and the margin either side. */
export function sequentialCharts(run: SequentialRun): ChartSpec[] {
  return run.figures.map((f, i) => {
    const x = f.calls.map((c) => c.pairs);
    const pick = (v: 'estimate' | 'low' | 'high') => f.calls.map((c) => c[v]);
    const last = f.calls.at(-1);
    return {
      id: `sequential-${i}`,
      title: `${f.name}: ${last?.verdict ?? 'no pair'} · ${run.b} vs ${run.a}`,
      x_kind: 'round',
      x_label: 'pairs',
      y_label: `B − A${unitOf(f)}`,
      y2_label: null,
      x,
      series: [
        { label: 'estimate', values: pick('estimate'), color: '#111827', dots: true },
        { label: 'interval low', values: pick('low'), color: '#2563eb' },
        { label: 'interval high', values: pick('high'), color: '#2563eb' },
        { label: `+${run.minEffectPct} (margin)`, values: x.map(() => run.minEffectPct), color: '#9ca3af' },
        { label: `−${run.minEffectPct} (margin)`, values: x.map(() => -run.minEffectPct), color: '#9ca3af' },
      ],
      markers: [],
      note: `the interval after each pair, valid however often it was looked at; ${f.betterWhen} is better; a call once made is kept`,
    };
  });
}

/** compare.html's section above the comparison tables. */
export function sequentialHtml(run: SequentialRun): string {
  const rows = run.figures.map((f) => {
    const c = f.calls.at(-1);
    const cls = c?.verdict === 'better' ? 'better' : c?.verdict === 'worse' ? 'worse' : c?.verdict === 'inconclusive' ? 'insufficient' : '';
    return `<tr><td>${esc(f.name)}</td><td class="v ${cls}">${esc(c?.verdict ?? 'no pair')}</td><td>${esc(c?.text ?? '')}${esc(unitOf(f) === '%' ? ' (%)' : ' (points)')}</td></tr>`;
  });
  return [
    `<h1>Sequential A/B: ${esc(run.b)} vs ${esc(run.a)}</h1>`,
    `<p class="meta">Stopping rule: min_effect ±${run.minEffectPct}%, max_pairs ${run.maxPairs}. Pairs ran A B, B A, … until every figure was better, worse or equivalent, or a limit came; intervals are valid however often they were looked at (docs/ab.md).</p>`,
    `<table><tr><th>figure</th><th>call</th><th>after the last pair</th></tr>${rows.join('')}</table>`,
  ].join('\n');
}

/** junit.xml of a sequential A/B: a figure ending `worse` is a failed test case. */
export function sequentialJunit(run: SequentialRun): string {
  const suite = `roundload.ab.${run.b}-vs-${run.a}`;
  const cases = run.figures.map((f) => {
    const c = f.calls.at(-1);
    const open = `    <testcase classname="${xmlEscape(suite)}" name="${xmlEscape(f.name)}" time="0"`;
    if (c?.verdict !== 'worse') return `${open}/>`;
    return `${open}>\n      <failure type="worse" message="${xmlEscape(`${f.name}: ${c.text}`)}">${xmlEscape(`${run.b} against ${run.a}, min_effect ±${run.minEffectPct}%: ${c.text}`)}</failure>\n    </testcase>`;
  });
  const failures = run.figures.filter((f) => f.calls.at(-1)?.verdict === 'worse').length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="roundload" tests="${cases.length}" failures="${failures}" errors="0">`,
    `  <testsuite name="${xmlEscape(suite)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

// What a shrink says: one progress line per variant, the table of variants, the final one-line answer, the
// comment header of shrunk.yaml and the shrink.json log. Pure: records in, text and values out.
import type { Workload } from '../config/index.js';
import { describeFailure, type Failure } from './predicate.js';
import { describeShape, scaledContext, type Shape } from './shape.js';
import type { ShrinkResult, VariantRecord } from './records.js';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** `fails 3/3`, `passes at try 2/3`, `time up at try 2/3`. */
function verdictText(v: VariantRecord, k: number): string {
  const at = v.tries.length;
  if (v.verdict === 'fails') return `fails ${at}/${k}`;
  if (v.verdict === 'passes') return `passes at try ${at}/${k}`;
  return `time up at try ${at + 1}/${k}`;
}

/** `shrink: agents 4 → 2: fails 3/3 (12.4 s)`, `shrink: agents 2 → 1: passes at try 2/3: kept 2 (5.1 s)`. */
export function progressLine(v: VariantRecord, k: number, from: string): string {
  const kept = v.verdict === 'fails' || v.step === 'original' ? '' : `: kept ${from}`;
  return `shrink: ${v.label}: ${verdictText(v, k)}${kept} (${seconds(v.duration_ms)})`;
}

/** The variants as a table for stdout. */
export function variantsTable(variants: readonly VariantRecord[], k: number): string {
  const rows = [['#', 'variant', 'result', 'time', 'folder'], ...variants.map((v) => [String(v.n), v.label, verdictText(v, k), seconds(v.duration_ms), v.slug])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 || i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The path in the answer: `via hop (direct passes: the hop is needed)`, `direct`, … */
function pathText(base: Workload, result: ShrinkResult): string {
  const via = base.target.via?.kind ?? null;
  if (via === null) return 'direct';
  const what = via === 'hop' ? 'the hop' : 'the proxy';
  if (result.pathNeeded === true) return `via ${via} (direct passes: ${what} is needed)`;
  if (result.pathNeeded === false) return `direct (it fails without ${what} too: ${what} is not needed)`;
  return `via ${via} (direct not tried)`;
}

/** `smallest failing: 1 agent × 7 rounds, context ÷4, think 0, via hop (direct passes: the hop is needed) — shrunk.yaml`. */
export function answerLine(base: Workload, result: ShrinkResult, file: string, k: number): string {
  const original = result.variants[0];
  if (original?.verdict === 'passes') return `nothing to shrink: the original workload passed at try ${original.tries.length}/${k} (it no longer fails ${k} of ${k})`;
  if (original?.verdict === 'cut') return `nothing to shrink: the time ran out before the original failed ${k} of ${k} (${original.tries.length} tries done)`;
  if (result.best === null) return 'nothing to shrink: the original was not run';
  const early = result.stoppedEarly ? ' (stopped early: the smallest so far)' : '';
  return `smallest failing: ${describeShape(result.best.shape)}, ${pathText(base, result)}${early} — ${file}`;
}

/** What the shrink removed, e.g. `agents 4 → 1`, `context ÷4 (system_prompt_tokens 1200 → 300, …)`. */
function removed(base: Workload, from: Shape, to: Shape): string[] {
  const out: string[] = [];
  if (to.agents !== from.agents) out.push(`agents ${from.agents} → ${to.agents}`);
  if (to.rounds !== from.rounds) out.push(`rounds ${from.rounds} → ${to.rounds}`);
  if (to.contextDivisor !== from.contextDivisor) {
    const before = scaledContext(base.conversation, 1);
    const after = scaledContext(base.conversation, to.contextDivisor);
    const fields = Object.entries(after)
      .filter(([field, n]) => n !== before[field as keyof typeof before])
      .map(([field, n]) => `${field} ${before[field as keyof typeof before]} → ${n}`);
    out.push(`context ÷${to.contextDivisor} (${fields.join(', ')})`);
  }
  if (to.thinkTimeMs !== from.thinkTimeMs) out.push(`think_time_ms ${from.thinkTimeMs} → ${to.thinkTimeMs}`);
  if (to.oneConnection !== from.oneConnection && to.agents > 1) out.push('a connection per agent → one shared connection');
  if (to.direct !== from.direct) out.push(`target.via (${base.target.via?.kind ?? 'none'}) → direct`);
  return out;
}

/** The comment lines at the top of shrunk.yaml. */
export function shrunkHeader(options: { runDir: string; base: Workload; start: Shape; failure: Failure; k: number; result: ShrinkResult }): string[] {
  const { base, start, failure, k, result } = options;
  const best = result.best?.shape ?? start;
  const cut = removed(base, start, best);
  const tries = result.variants.reduce((n, v) => n + v.tries.length, 0);
  return [
    `roundload shrink of ${options.runDir}: the smallest workload found that still failed (${describeFailure(failure)}) ${k} of ${k} tries.`,
    `removed: ${cut.length === 0 ? 'nothing (no smaller variant failed every try)' : cut.join(', ')}`,
    `kept: ${pathText(base, result)}`,
    `took ${result.variants.length} variants, ${tries} tries, ${seconds(result.elapsedMs)}${result.stoppedEarly ? '; stopped early (--max-time or Ctrl-C): smaller ones may still fail' : ''}.`,
    'run it: roundload run shrunk.yaml',
  ];
}

/** shrink.json: the settings, every variant with its tries, and the answer. */
export function shrinkLog(options: {
  runDir: string;
  failure: Failure;
  k: number;
  maxTimeMs: number;
  base: Workload;
  result: ShrinkResult;
  answer: string;
  shrunkFile: string | null;
}): Record<string, unknown> {
  const { result } = options;
  return {
    run: options.runDir,
    failure: options.failure,
    k: options.k,
    max_time_ms: options.maxTimeMs,
    original_fails: result.originalFails,
    stopped_early: result.stoppedEarly,
    path_needed: result.pathNeeded,
    elapsed_ms: Math.round(result.elapsedMs),
    variants: result.variants,
    smallest: result.best === null ? null : (result.variants.filter((v) => v.kept).at(-1)?.settings ?? null),
    shrunk_file: options.shrunkFile,
    answer: options.answer,
  };
}

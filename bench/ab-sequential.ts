// The sequential A/B benchmark (issue 23): `roundload ab` with a stopping rule, run again and again on the
// embedded deployment of workloads/ab-target-ctas.yaml (phases c64 and c96), arm B's decode faster by a known
// factor. Prints, per ab run, each phase's decode tok/s call (verdict, estimate, interval, pairs) and the
// time it took; then the tally per phase. Asserts nothing: the figures go to docs/ab.md.
//
//   npm run bench -- ab [--effect PCT] [--spread PCT] [--runs N] [--min-effect PCT] [--max-pairs N] [--phase DURATION]
//
// e.g. `--effect 5.7 --runs 5` (the seed's gain at 96), `--effect 0 --runs 10` (A/A).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse, stringify } from 'yaml';
import { loadAbFile } from '../src/config/index.js';
import { runAb } from '../src/compare/index.js';

const ROOT = new URL('../', import.meta.url).pathname;

interface Args {
  effectPct: number;
  /** The embedded engine's run-to-run spread (engine.run_spread_pct), as restarts give on real GPUs. */
  spreadPct: number;
  runs: number;
  minEffectPct: number;
  maxPairs: number;
  phase: string;
  keep: boolean;
}

function parseArgs(args: string[]): Args {
  const value = (name: string, fallback: string): string => {
    const at = args.indexOf(name);
    return at === -1 ? fallback : (args[at + 1] ?? fallback);
  };
  return {
    effectPct: Number(value('--effect', '5.7')),
    spreadPct: Number(value('--spread', '0')),
    runs: Number(value('--runs', '5')),
    minEffectPct: Number(value('--min-effect', '3')),
    maxPairs: Number(value('--max-pairs', '10')),
    phase: value('--phase', '10s'),
    keep: args.includes('--keep'),
  };
}

/** The shipped ab file with a stopping rule, arm B `effectPct` faster at decode, phases `phase` long. */
function abFile(dir: string, a: Args): string {
  const doc = parse(readFileSync(join(ROOT, 'workloads/ab-target-ctas.yaml'), 'utf8')) as Record<string, unknown> & {
    workload: { sweep: Record<string, unknown> };
    arms: { name: string; set?: string[] }[];
  };
  doc.workload.sweep['phase_duration'] = a.phase;
  delete doc['repeats'];
  // The claim is about decode throughput: the A/B waits for it (and the error rate), not for e2e p50.
  doc['until'] = { min_effect_pct: a.minEffectPct, max_pairs: a.maxPairs, figures: ['decode', 'errors'] };
  doc.arms[1]!.set = [`engine.decode_speedup=${1 + a.effectPct / 100}`];
  if (a.spreadPct > 0) (doc.workload as Record<string, Record<string, unknown>>)['engine']!['run_spread_pct'] = a.spreadPct;
  const file = join(dir, 'ab.yaml');
  writeFileSync(file, stringify(doc));
  return file;
}

export async function abSequentialBench(args: string[]): Promise<number> {
  const a = parseArgs(args);
  if (![a.effectPct, a.runs, a.minEffectPct, a.maxPairs].every(Number.isFinite) || a.runs < 1) {
    process.stderr.write('usage: npm run bench -- ab [--effect PCT] [--spread PCT] [--runs N] [--min-effect PCT] [--max-pairs N] [--phase DURATION] [--keep]\n');
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), 'roundload-ab-bench-'));
  const plan = await loadAbFile(abFile(dir, a));
  process.stdout.write(
    `ab bench: B decodes ${a.effectPct}% faster, run spread ${a.spreadPct}%; until min_effect ${a.minEffectPct}%, max_pairs ${a.maxPairs}; phases ${a.phase}; ${a.runs} ab runs in ${dir}\n`,
  );
  const tally = new Map<string, Map<string, number>>();
  for (let run = 1; run <= a.runs; run += 1) {
    const started = performance.now();
    const result = await runAb({ plan, out: join(dir, `ab-${run}`) });
    const minutes = (performance.now() - started) / 60_000;
    const decode = result.comparisons.flatMap((c) => c.phases.map((p) => ({ name: `${p.phase} decode tok/s`, calls: p.rows.find((r) => r.figure === 'decode_tokens_per_s')!.calls })));
    const cells = decode.map((f) => {
      const c = f.calls.at(-1)!;
      const byVerdict = tally.get(f.name) ?? new Map<string, number>();
      byVerdict.set(c.verdict, (byVerdict.get(c.verdict) ?? 0) + 1);
      tally.set(f.name, byVerdict);
      const interval = c.low === null ? '' : ` [${c.low.toFixed(1)}, ${c.high!.toFixed(1)}]`;
      return `${f.name}: ${c.verdict} ${c.estimate === null ? '–' : `${c.estimate >= 0 ? '+' : ''}${c.estimate.toFixed(1)}%`}${interval} (${c.pairs} pairs)`;
    });
    const pairs = Math.floor(result.runs.filter((r) => r.status === 'completed').length / 2);
    process.stdout.write(`  run ${run}: ${cells.join(' · ')} · ${pairs} pairs in ${minutes.toFixed(1)} min\n`);
    if (!a.keep) rmSync(join(dir, `ab-${run}`), { recursive: true, force: true });
  }
  for (const [name, byVerdict] of tally) process.stdout.write(`${name}: ${[...byVerdict].map(([v, n]) => `${v} ${n}/${a.runs}`).join(', ')}\n`);
  if (!a.keep) rmSync(dir, { recursive: true, force: true });
  return 0;
}

// The soak benchmark: proves memory stays flat over a long run. Drives ≥ 200k requests (agents looping
// conversations, `duration` mode) against the embedded engine in-process with zero delays, rotating and
// gzipping the results files as a night's run would, and prints RSS at start, middle and end.
// Claim checked: RSS at the end within 10% of the middle (medians of samples over each stretch).
// `--requests N` changes the count, `--keep` keeps the results folder, `--trace` prints every sample.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseWorkload } from '../src/config/index.js';
import { executeRun } from '../src/run/index.js';
import { readJsonlFile, resultPath } from '../src/results/index.js';

const WORKLOAD = `name: soak-bench
duration: 24h            # stopped by the benchmark once it has its requests
window_s: 10
agents: {count: 32, rounds: 8, think_time_ms: 0}
conversation: {system_prompt_tokens: 100, first_user_tokens: 40, user_turn_tokens: 20, tool_result_tokens: 20, tool_result_growth_tokens: 5, max_tokens: 64}
engine: {prefill_ms_per_1k_tokens: 0, decode_step_ms: 0, decode_step_ms_per_running: 0, kv_transfer_ms: 0, output_tokens_min: 1, output_tokens_max: 4}
results: {max_file_mb: 32, compress_rotated: true}
`;

interface Sample {
  requests: number;
  s: number;
  rssMb: number;
  heapMb: number;
}

/** The three figures: the median of the samples in a stretch of the run (RSS moves ±10% from one GC or
 * gzip to the next, so a single reading would measure the allocator, not the trend). */
const STRETCHES = [
  { at: 'start', from: 0.05, to: 0.1 },
  { at: 'middle', from: 0.45, to: 0.55 },
  { at: 'end', from: 0.9, to: 1 },
] as const;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

export async function soakBench(args: string[]): Promise<number> {
  const at = args.indexOf('--requests');
  const total = at >= 0 ? Number(args[at + 1]) : 200_000;
  if (!Number.isInteger(total) || total < 1000) throw new Error('--requests must be a whole number ≥ 1000');
  const keep = args.includes('--keep');
  const trace = args.includes('--trace');
  // A full GC before each sample, so heap figures are live objects rather than garbage not yet collected.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const dir = mkdtempSync(join(tmpdir(), 'roundload-soak-'));
  const out = join(dir, 'run');
  const step = Math.max(100, Math.floor(total / 100));
  const samples: Sample[] = [];
  const stop = new AbortController();
  const t0 = performance.now();
  let done = 0;
  const sample = (): void => {
    gc();
    const m = process.memoryUsage();
    const s: Sample = { requests: done, s: Math.round((performance.now() - t0) / 100) / 10, rssMb: mb(m.rss), heapMb: mb(m.heapUsed) };
    samples.push(s);
    if (trace || done % (step * 10) === 0)
      process.stderr.write(`  ${String(s.requests).padStart(7)} requests  ${String(s.s).padStart(6)} s  rss ${s.rssMb} MB  heap ${s.heapMb} MB  external ${mb(m.external)} MB\n`);
  };
  process.stderr.write(`soak: ${total} requests, 32 agents looping 8-round conversations, embedded engine with zero delays, results in ${out}\n`);
  const result = await executeRun({
    workload: parseWorkload(WORKLOAD, 'soak-bench.yaml'),
    out,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.kind !== 'request') return;
      done += 1;
      if (done % step === 0) sample();
      if (done === total) stop.abort();
    },
  });
  const wallS = (performance.now() - t0) / 1000;
  let lines = 0;
  await readJsonlFile(
    resultPath(out, 'requests'),
    (_v): _v is unknown => true,
    () => (lines += 1),
  );
  const files = readdirSync(out);
  const parts = files.filter((f) => /^requests\.\d+\.jsonl(\.gz)?$/.test(f));
  const bytes = files.reduce((n, f) => n + statSync(join(out, f)).size, 0);
  const figures = STRETCHES.map((st) => {
    const inside = samples.filter((x) => x.requests > st.from * total && x.requests <= st.to * total);
    const rss = inside.map((x) => x.rssMb);
    return {
      at: st.at,
      from: Math.round(st.from * total),
      to: Math.round(st.to * total),
      n: inside.length,
      rss: median(rss),
      rssMin: Math.min(...rss),
      rssMax: Math.max(...rss),
      heap: median(inside.map((x) => x.heapMb)),
    };
  });
  const middle = figures[1]!;
  const end = figures[2]!;
  const growth = (end.rss - middle.rss) / middle.rss;
  const flat = Math.abs(growth) <= 0.1;
  const t = result.summary.totals;
  process.stdout.write(
    [
      '',
      `requests   ${t.requests} (${t.ok} ok, ${t.errors} errors, ${t.hangs} hangs) in ${wallS.toFixed(1)} s, ${(t.requests / wallS).toFixed(0)}/s; ${result.summary.windows.length} windows`,
      `files      requests.jsonl + ${parts.length} rotated parts (${parts.filter((p) => p.endsWith('.gz')).length} gzipped), ${mb(bytes)} MB on disk; ${lines} request lines read back across the parts`,
      '',
      `RSS and heap after a full GC, sampled every ${step} requests; each figure the median over its stretch`,
      'figure   requests          samples   rss MB (min–max)        heap MB',
      ...figures.map((f) => `${f.at.padEnd(7)}  ${`${f.from}–${f.to}`.padEnd(16)}  ${String(f.n).padStart(7)}   ${`${f.rss} (${f.rssMin}–${f.rssMax})`.padEnd(22)}  ${f.heap}`),
      '',
      `rss end vs middle: ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}% → ${flat ? 'flat (within 10%)' : 'NOT flat (more than 10%)'}`,
      '',
    ].join('\n'),
  );
  if (!keep) rmSync(dir, { recursive: true, force: true });
  const consistent = lines === t.requests;
  if (!consistent) process.stdout.write(`requests.jsonl holds ${lines} lines but the summary counted ${t.requests}\n`);
  return flat && consistent && t.requests >= total ? 0 : 1;
}

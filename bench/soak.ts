// The soak benchmark: proves memory stays flat over a long run. Drives ≥ 200k requests (agents looping
// conversations, `duration` mode) against the embedded engine in-process with zero delays, rotating and
// gzipping the results files as a night's run would, and prints RSS at start, middle and end.
// Claim checked: RSS at the end within 10% of the middle. `--requests N` changes the count, `--keep` keeps the folder.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseWorkload } from '../src/config/index.js';
import { executeRun } from '../src/run/index.js';
import { readJsonl, resultPath } from '../src/results/index.js';

const WORKLOAD = `name: soak-bench
duration: 24h            # stopped by the benchmark once it has its requests
window_s: 10
agents: {count: 32, rounds: 8, think_time_ms: 0}
conversation: {system_prompt_tokens: 100, first_user_tokens: 40, user_turn_tokens: 20, tool_result_tokens: 20, tool_result_growth_tokens: 5, max_tokens: 64}
engine: {prefill_ms_per_1k_tokens: 0, decode_step_ms: 0, decode_step_ms_per_running: 0, kv_transfer_ms: 0, output_tokens_min: 1, output_tokens_max: 4}
results: {max_file_mb: 32, compress_rotated: true}
`;

interface Sample {
  at: string;
  requests: number;
  s: number;
  rssMb: number;
  heapMb: number;
}

function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

export async function soakBench(args: string[]): Promise<number> {
  const at = args.indexOf('--requests');
  const total = at >= 0 ? Number(args[at + 1]) : 200_000;
  if (!Number.isInteger(total) || total < 1000) throw new Error('--requests must be a whole number ≥ 1000');
  const keep = args.includes('--keep');
  // A full GC before each sample, so heap figures are live objects rather than garbage not yet collected.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const dir = mkdtempSync(join(tmpdir(), 'roundload-soak-'));
  const out = join(dir, 'run');
  const marks = new Map([[Math.min(5000, total / 10), 'start'], [Math.floor(total / 2), 'middle'], [total, 'end']]);
  const samples: Sample[] = [];
  const stop = new AbortController();
  const t0 = performance.now();
  let done = 0;
  const sample = (label: string): void => {
    gc();
    const m = process.memoryUsage();
    const s: Sample = { at: label, requests: done, s: Math.round((performance.now() - t0) / 100) / 10, rssMb: mb(m.rss), heapMb: mb(m.heapUsed) };
    samples.push(s);
    process.stderr.write(`  ${label.padEnd(6)} ${String(s.requests).padStart(7)} requests  ${String(s.s).padStart(6)} s  rss ${s.rssMb} MB  heap ${s.heapMb} MB\n`);
  };
  process.stderr.write(`soak: ${total} requests, 32 agents looping 8-round conversations, embedded engine with zero delays, results in ${out}\n`);
  const result = await executeRun({
    workload: parseWorkload(WORKLOAD, 'soak-bench.yaml'),
    out,
    signal: stop.signal,
    onEvent: (e) => {
      if (e.kind !== 'request') return;
      done += 1;
      const label = marks.get(done);
      if (label === undefined) return;
      sample(label);
      if (label === 'end') stop.abort();
    },
  });
  const wallS = (performance.now() - t0) / 1000;
  let lines = 0;
  await readJsonl(resultPath(out, 'requests'), () => (lines += 1));
  const files = readdirSync(out);
  const parts = files.filter((f) => /^requests\.\d+\.jsonl(\.gz)?$/.test(f));
  const bytes = files.reduce((n, f) => n + statSync(join(out, f)).size, 0);
  const middle = samples.find((s) => s.at === 'middle')!;
  const end = samples.find((s) => s.at === 'end')!;
  const growth = (end.rssMb - middle.rssMb) / middle.rssMb;
  const flat = Math.abs(growth) <= 0.1;
  const t = result.summary.totals;
  process.stdout.write(
    [
      '',
      `requests   ${t.requests} (${t.ok} ok, ${t.errors} errors, ${t.hangs} hangs) in ${wallS.toFixed(1)} s, ${(t.requests / wallS).toFixed(0)}/s; ${result.summary.windows.length} windows`,
      `files      requests.jsonl + ${parts.length} rotated parts (${parts.filter((p) => p.endsWith('.gz')).length} gzipped), ${mb(bytes)} MB on disk; ${lines} request lines read back across the parts`,
      '',
      'sample   requests       s   rss MB  heap MB',
      ...samples.map((s) => `${s.at.padEnd(6)} ${String(s.requests).padStart(9)} ${String(s.s).padStart(7)} ${String(s.rssMb).padStart(8)} ${String(s.heapMb).padStart(8)}`),
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

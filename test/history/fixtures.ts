// A finished results folder made by hand: run.json and requests.jsonl as a run leaves them, summary.json built
// from them by the real rebuild (`roundload report`'s code), so the history reads what a run would have written.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rebuildSummary } from '../../src/results/index.js';
import { hangRecord, record } from '../report/fixtures.js';

export interface RunSpec {
  startedAt: string;
  name?: string;
  labels?: Record<string, string>;
  /** TTFT of every request (ms). @default 20 */
  ttftMs?: number;
  /** One request hangs (mid-stream) beside the ok ones. */
  hang?: boolean;
}

/** Writes a finished two-round run into `dir` and returns `dir`. */
export async function runFolder(dir: string, spec: RunSpec): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const manifest = {
    schema_version: 1,
    name: spec.name ?? 'nightly',
    status: 'completed',
    started_at: spec.startedAt,
    ended_at: spec.startedAt,
    argv: ['run', 'nightly.yaml'],
    labels: spec.labels ?? { git_sha: 'abc123' },
    target: { url: 'http://127.0.0.1:1', embedded: true, model: 'deepseek-v4-flash', tls_insecure: false },
    path: 'direct',
    versions: { roundload: '0.1.0', node: process.version },
    host: { hostname: 'ci-1', platform: 'linux', cpus: 2 },
    workload: { name: spec.name ?? 'nightly', window_s: 10, agents: { count: 2, rounds: 2 } },
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(manifest, null, 2));
  const ttft = spec.ttftMs ?? 20;
  const records = [1, 2].flatMap((round) => [0, 1].map((agent) => record({ agent, round, conversation: `a${agent}-c1`, run_ms: round * 300 + agent, ttft_ms: ttft, e2e_ms: ttft + 200 })));
  if (spec.hang === true) records.push(hangRecord({ agent: 1, round: 2, run_ms: 700 }));
  writeFileSync(join(dir, 'requests.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  writeFileSync(join(dir, 'events.jsonl'), '');
  writeFileSync(join(dir, 'gauges.jsonl'), '');
  const rebuilt = await rebuildSummary(dir);
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(rebuilt.summary, null, 2));
  return dir;
}

// Helpers of the path tests: an embedded engine behind a built-in TLS hop, and a small run against a
// target given as YAML flow text, its records sorted by agent and round.
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { startEngine, type EngineHandle } from '../../src/engine/index.js';
import { startHop, type HopHandle } from '../../src/hop/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { engineSchema } from '../../src/config/schema.js';
import { readJsonl, tempDir } from './tmp.js';

export async function backend(t: TestContext): Promise<{ engine: EngineHandle; hop: HopHandle }> {
  const engine = await startEngine({ settings: engineSchema.parse({ decode_step_ms: 3, output_tokens_max: 16 }) });
  const hop = await startHop({ upstream: engine.url });
  t.after(async () => {
    await hop.close();
    await engine.close();
  });
  return { engine, hop };
}

/** A small run against `target`. Without the preflight by default: these tests are about what each request
 * meets on the path (a broken path would otherwise stop the run at its start, exit 3). */
export async function runTarget(t: TestContext, target: string, options: { preflight?: boolean } = {}): Promise<RequestRecord[]> {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: paths
target: ${target}
agents: {count: 2, rounds: 3, think_time_ms: 20}
conversation: {max_tokens: 64, system_prompt_tokens: 200, first_user_tokens: 50}
watchdog: {connect_ms: 800, headers_ms: 3000, first_token_ms: 3000, stall_ms: 3000, total_ms: 8000}
monitor: {canary_interval_s: 0}
`,
    'paths.yaml',
  );
  await executeRun({ workload, out, preflight: options.preflight ?? false });
  return readJsonl<RequestRecord>(join(out, 'requests.jsonl')).sort((a, b) => a.agent - b.agent || a.round - b.round);
}

export const classes = (rs: RequestRecord[]) => rs.map((r) => (r.status === 'ok' ? 'ok' : `${r.status}:${r.error?.class ?? r.hang?.phase}`));

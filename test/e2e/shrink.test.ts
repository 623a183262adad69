// `roundload shrink` on a real failure: a run through the built-in hop stalling every 7th request on a
// connection (4 agents × 12 rounds) shrinks to one agent and at most 8 rounds, keeps the hop (direct passes),
// and its shrunk.yaml fails again when run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadWorkload, parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';

// The hop serves 6 requests a connection, then stalls: each agent's 7th round hangs at headers.
// Small answers (plain default max_tokens, so no tool call is ever cut short and resent) and fast decode.
// Only the headers deadline is shortish (it is how the stall is seen: 1.5 s, as 800 ms also cut a cold first
// request beside the stress run's busy loops); the others are generous, so a starved engine thread on a loaded
// machine never makes a hang of its own (stall_ms 300 and headers_ms 800 once gave 8 hangs, not 4).
const STALL_EVERY_7TH = `name: stall7
target: {via: {kind: hop, faults: [{kind: stall, after_requests: 6}]}}
agents: {count: 4, rounds: 12, think_time_ms: 20}
conversation: {system_prompt_tokens: 400, first_user_tokens: 50, tool_result_tokens: 40}
watchdog: {connect_ms: 2000, headers_ms: 1500, first_token_ms: 5000, stall_ms: 2000, total_ms: 10000}
monitor: {canary_interval_s: 0}
engine: {decode_step_ms: 2, output_tokens_min: 4, output_tokens_max: 8}
`;

async function failedRun(t: import('node:test').TestContext): Promise<string> {
  const dir = join(tempDir(t), 'run');
  await executeRun({ workload: parseWorkload(STALL_EVERY_7TH, 'stall7.yaml'), out: dir, preflight: false });
  const hangs = readJsonl<{ status: string; round: number; hang: { phase: string } }>(join(dir, 'requests.jsonl')).filter((r) => r.status === 'hang');
  assert.deepEqual(
    hangs.map((h) => `round ${h.round} ${h.hang.phase}`),
    Array(4).fill('round 7 headers'),
    'the original run: each agent hung once, at round 7, waiting for headers',
  );
  return dir;
}

test('shrink of the "stall every 7th request" fault finds one agent and at most 8 rounds, and the hop is needed', async (t) => {
  const run = await failedRun(t);
  const started = Date.now();
  const cli = await runCli(['shrink', run, '--k', '2', '--max-time', '3m'], { timeoutMs: 180_000 });
  const tookS = (Date.now() - started) / 1000;
  t.diagnostic(`shrink took ${tookS.toFixed(1)} s\n${cli.stderr}${cli.stdout}`);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stderr, /^shrink: original: fails 2\/2 \(\d+\.\d s\)$/m);
  assert.match(cli.stderr, /^shrink: agents 4 → 2: fails 2\/2 /m);
  assert.match(cli.stderr, /^shrink: path via hop → direct: passes at try 1\/2: kept via hop /m);
  assert.match(cli.stdout, /^smallest failing: 1 agent × [1-8] rounds, .*via hop \(direct passes: the hop is needed\) — .*shrunk\.yaml$/m);

  const out = join(run, 'shrink');
  const shrunk = await loadWorkload(join(out, 'shrunk.yaml'));
  assert.equal(shrunk.agents.count, 1);
  assert.ok(shrunk.agents.rounds <= 8 && shrunk.agents.rounds >= 7, `rounds ${shrunk.agents.rounds}`);
  assert.deepEqual(shrunk.target.via, { kind: 'hop', faults: [{ kind: 'stall', after_requests: 6 }] });
  assert.match(readFileSync(join(out, 'shrunk.yaml'), 'utf8'), /^# roundload shrink of .*\n# removed: agents 4 → 1, rounds 12 → \d, /);

  const log = JSON.parse(readFileSync(join(out, 'shrink.json'), 'utf8')) as { variants: { slug: string; verdict: string; tries: { dir: string | null }[] }[]; path_needed: boolean };
  assert.equal(log.path_needed, true);
  assert.equal(log.variants[0]?.verdict, 'fails');
  for (const v of log.variants) for (const tr of v.tries) assert.ok(tr.dir !== null && existsSync(join(tr.dir, 'summary.json')), `${v.slug}: its results are kept`);
  assert.deepEqual(readdirSync(join(out, 'variants')).sort(), log.variants.map((v) => v.slug).sort());

  // The answer is a workload anyone can run: it fails again.
  const again = await executeRun({ workload: shrunk, out: join(out, 'again'), preflight: false });
  assert.ok(again.summary.totals.hangs >= 1, 'roundload run shrunk.yaml hangs again');
});

test('a run whose failure no longer comes back is not shrunk (exit 1); a folder that is not a run is bad input (exit 2)', async (t) => {
  const run = await failedRun(t);
  const healed = await runCli(['shrink', run, '--k', '2', '--set', 'target.via.faults=[]', '--no-keep', '--out', join(run, 'healed')], { timeoutMs: 60_000 });
  assert.equal(healed.code, 1, healed.stderr);
  assert.match(healed.stderr, /^shrink: original: passes at try 1\/2 \(\d+\.\d s\)$/m);
  assert.match(healed.stdout, /^nothing to shrink: the original workload passed at try 1\/2 \(it no longer fails 2 of 2\)$/m);
  assert.equal(existsSync(join(run, 'healed', 'shrunk.yaml')), false);
  assert.deepEqual(readdirSync(join(run, 'healed', 'variants', '00-original')), [], '--no-keep deleted the try');

  const notARun = tempDir(t);
  writeFileSync(join(notARun, 'notes.txt'), 'not a run');
  const bad = await runCli(['shrink', notARun], { timeoutMs: 30_000 });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /is not a roundload results folder/);
});

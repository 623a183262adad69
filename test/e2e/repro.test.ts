// `roundload repro` end to end: a run through the hop hangs on a reused socket (a stall after 2 requests), the
// reproducer written from its folder brings the hang back standalone — plain `node repro.mjs` and `sh repro.sh`,
// no tsx, no roundload code — against a fresh engine and hop started as separate processes, and finds nothing
// wrong with the engine alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { findExecutable, spawnEngine, spawnHop } from '../helpers/procs.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';

const ENGINE = { decode_step_ms: 4, output_tokens_min: 8, output_tokens_max: 16 };

async function hangingRun(t: import('node:test').TestContext): Promise<string> {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: repro-stall
target: {via: {kind: hop, faults: [{kind: stall, after_requests: 2}]}, headers: {x-team: infra, x-api-key: sk-not-for-files}, public_headers: [x-team]}
agents: {count: 1, rounds: 4, think_time_ms: 30}
conversation: {max_tokens: 16, system_prompt_tokens: 200, first_user_tokens: 50, tool_result_tokens: 40}
watchdog: {connect_ms: 2000, headers_ms: 1200, first_token_ms: 2500, stall_ms: 1000, total_ms: 6000}
monitor: {canary_interval_s: 0}
engine: ${JSON.stringify(ENGINE)}
`,
    'repro-stall.yaml',
  );
  await executeRun({ workload, out, preflight: false });
  return out;
}

/** A plain child process (no tsx), bounded. */
function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('repro of a hop stall: repro.mjs and repro.sh bring the hang back on the reused socket, and not against the engine alone', async (t) => {
  // The run and the standalone deployment start together (the engine takes a few seconds to come up).
  const [runDir, engine] = await Promise.all([hangingRun(t), spawnEngine(t, ENGINE, ['--topology', 'single'])]);
  const hop = spawnHop(t, engine.url, ['stall:after_requests=2']);
  const records = readJsonl<RequestRecord>(join(runDir, 'requests.jsonl'));
  const hung = records.find((r) => r.status === 'hang');
  assert.equal(hung?.connection?.nth, 3, JSON.stringify(records.map((r) => [r.status, r.connection?.nth])));

  const out = join(tempDir(t), 'repro');
  const cli = await runCli(['repro', runDir, '--out', out], { timeoutMs: 30_000 });
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.stdout.trim(), out);
  assert.deepEqual(readdirSync(out).sort(), ['README.txt', 'bodies', 'repro.mjs', 'repro.sh']);
  const readme = readFileSync(join(out, 'README.txt'), 'utf8');
  assert.match(readme, /request 3 of the sequence, on connection c\d+ \(nth 3, a reused socket\).*hang at headers \(headers_ms 1200\)/);
  assert.match(readme, /diagnosis: /);
  const written = [readFileSync(join(out, 'repro.mjs'), 'utf8'), readFileSync(join(out, 'repro.sh'), 'utf8'), readme].join('\n');
  assert.ok(!written.includes('sk-not-for-files'), 'no secret header value is written');
  assert.match(written, /x-team: infra|"x-team": "infra"/);
  const bodies = readdirSync(join(out, 'bodies')).map((f) => readFileSync(join(out, 'bodies', f), 'utf8').length);
  const sequence = records.filter((r) => r.connection?.id === hung.connection!.id).sort((a, b) => a.connection!.nth - b.connection!.nth);
  assert.deepEqual(
    bodies,
    sequence.map((r) => r.request_bytes),
    'the bodies have the recorded sizes',
  );

  const { url, ca } = await hop;
  const again = await run(process.execPath, ['repro.mjs', '--target', url, '--ca', ca], out);
  assert.equal(again.code, 1, again.stdout + again.stderr);
  const verdict = again.stdout.trim().split('\n').at(-1)!;
  assert.match(verdict, /^REPRODUCED: request 3 on the reused socket \(nth 3\) got no response headers for 1\.\d s \(headers_ms 1200\)$/);
  assert.equal(again.stdout.match(/^request \d\/3 /gm)?.length, 3, 'one line per request');

  const healthy = await run(process.execPath, ['repro.mjs', '--target', engine.url], out);
  assert.equal(healthy.code, 0, healthy.stdout + healthy.stderr);
  assert.match(healthy.stdout, /^NOT REPRODUCED: 3 requests \(1 x 3\) all ok/m);
  assert.match(healthy.stdout, /request 3\/3 .* socket reused \(nth 3; run: nth 3\)/);

  assert.equal(spawnSync('sh', ['-n', join(out, 'repro.sh')]).status, 0, 'repro.sh parses');
  if (findExecutable('curl') === null) {
    t.diagnostic('curl is not installed: repro.sh was only checked with sh -n');
    return;
  }
  const curl = await run('sh', ['repro.sh', '--target', url, '--ca', ca], out);
  assert.equal(curl.code, 1, curl.stdout + curl.stderr);
  assert.match(curl.stdout, /request 2\/3 http 200 connects 0 /, 'the second request reused the socket');
  assert.match(curl.stdout, /^REPRODUCED \(hang\): repro\.sh: request 3\/3 http 000 connects 0 .* exit 28 /m);
});

test('repro of a run without a failure is a one-line error, exit 2', async (t) => {
  const out = join(tempDir(t), 'run');
  const workload = parseWorkload(
    `name: repro-ok
agents: {count: 1, rounds: 2, think_time_ms: 0}
conversation: {max_tokens: 8, system_prompt_tokens: 50, first_user_tokens: 20}
monitor: {canary_interval_s: 0}
engine: ${JSON.stringify(ENGINE)}
`,
    'repro-ok.yaml',
  );
  await executeRun({ workload, out, preflight: false });
  const cli = await runCli(['repro', out], { timeoutMs: 30_000 });
  assert.equal(cli.code, 2);
  assert.equal(cli.stderr.trim().split('\n').length, 1, cli.stderr);
  assert.match(cli.stderr, /has no hang or error to reproduce \(2 requests, all ok\)/);
});

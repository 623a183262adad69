import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import type { Summary } from '../../src/analysis/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { cliCommand, ROOT } from '../helpers/root.js';

function lines(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '').length;
}

/** Resolves once `path` has at least `n` lines; bounded. */
async function waitForLines(path: string, n: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (lines(path) < n) {
    if (Date.now() > until) throw new Error(`${path} did not reach ${n} lines in ${timeoutMs} ms`);
    await sleep(50);
  }
}

function workloadFile(dir: string, engine: string): string {
  const file = join(dir, 'long.yaml');
  // No tools: every answer is content of the engine's output length (tool-call answers are short).
  writeFileSync(file, `name: long\nduration: 5m\nagents: {count: 4, rounds: 4, think_time_ms: 20}\nconversation: {tools: none}\nengine: ${engine}\n`);
  return file;
}

function assertComplete(out: string): { summary: Summary; records: RequestRecord[] } {
  for (const f of ['run.json', 'requests.jsonl', 'events.jsonl', 'histograms.json', 'summary.json']) assert.ok(existsSync(join(out, f)), `${f} written`);
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { status: string; ended_at: string | null };
  assert.equal(manifest.status, 'interrupted');
  assert.ok(manifest.ended_at !== null);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(summary.run.status, 'interrupted');
  assert.equal(summary.totals.requests, records.length, 'summary.json counts every line of requests.jsonl');
  assert.equal(summary.totals.ok + summary.totals.errors + summary.totals.hangs, records.length);
  const events = readJsonl<{ kind: string; status?: string }>(join(out, 'events.jsonl'));
  const end = events.filter((e) => e.kind === 'run_end');
  assert.equal(end.length, 1);
  assert.equal(end[0]!.status, 'interrupted');
  const histograms = JSON.parse(readFileSync(join(out, 'histograms.json'), 'utf8')) as { histograms: { metric: string; round: number; count: number }[] };
  const e2eAll = histograms.histograms.find((h) => h.metric === 'e2e' && h.round === 0);
  assert.equal(e2eAll?.count ?? 0, summary.totals.ok, 'histograms.json holds every ok request');
  for (const f of ['report.html', 'junit.xml']) assert.ok(existsSync(join(out, f)), `${f} written`);
  assert.match(readFileSync(join(out, 'junit.xml'), 'utf8'), /<testsuite/);
  return { summary, records };
}

/** How a test starts roundload: `node dist/src/cli.js`, or from source through tsx. */
const NODE_CLI = cliCommand();

/** A process still alive (a zombie awaiting its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('SIGTERM during a long run: requests in flight finish within the grace, the folder is complete, exit 130 within seconds', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  let pid = 0;
  const running = runCli(['run', workloadFile(dir, '{decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 24}'), '--out', out], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  await waitForLines(join(out, 'requests.jsonl'), 12, 30_000);
  const signalledAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const res = await running;
  const tookMs = Date.now() - signalledAt;
  assert.equal(res.code, 130, res.stderr);
  assert.ok(tookMs < 8000, `ended ${tookMs} ms after SIGTERM`);
  assert.match(res.stderr, /SIGTERM: stopping/);
  const { records } = assertComplete(out);
  assert.ok(records.length >= 12);
  // Fast requests end well inside the 2 s grace: none is cut off.
  assert.deepEqual(
    records.filter((r) => r.status !== 'ok').map((r) => r.error?.class),
    [],
  );
});

test('requests still running when the grace ends are recorded as aborted, and the folder is still complete', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  let pid = 0;
  // One request decodes for about 20 s: far past the grace.
  const running = runCli(['run', workloadFile(dir, '{decode_step_ms: 200, output_tokens_min: 100, output_tokens_max: 100}'), '--out', out], { timeoutMs: 60_000, onSpawn: (p) => (pid = p) });
  await waitForLines(join(out, 'events.jsonl'), 2, 30_000); // run_start and phase: agents are sending
  await sleep(500);
  const signalledAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const res = await running;
  const tookMs = Date.now() - signalledAt;
  assert.equal(res.code, 130, res.stderr);
  assert.ok(tookMs >= 1800, `the in-flight requests got their grace (${tookMs} ms)`);
  assert.ok(tookMs < 10_000, `ended ${tookMs} ms after SIGTERM`);
  const { records } = assertComplete(out);
  assert.equal(records.length, 4, "each agent's in-flight request is recorded");
  assert.ok(
    records.every((r) => r.status === 'error' && r.error?.class === 'aborted'),
    JSON.stringify(records.map((r) => r.error)),
  );
});

test('a second SIGTERM exits at once with 130', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  let pid = 0;
  let firstAt = 0;
  // The second signal goes once the first was handled (its notice printed): two sent 50 ms apart to a
  // process held back by a loaded machine arrive as one (pending signals of a kind do not queue).
  const onStderrLine = (line: string): void => {
    if (firstAt === 0 || !/SIGTERM: stopping/.test(line)) return;
    process.kill(pid, 'SIGTERM');
  };
  const running = runCli(['run', workloadFile(dir, '{decode_step_ms: 200, output_tokens_min: 100, output_tokens_max: 100}'), '--out', out], {
    timeoutMs: 60_000,
    onSpawn: (p) => (pid = p),
    onStderrLine,
  });
  await waitForLines(join(out, 'events.jsonl'), 2, 30_000);
  await sleep(300);
  firstAt = Date.now();
  process.kill(pid, 'SIGTERM');
  const res = await running;
  const tookMs = Date.now() - firstAt;
  assert.equal(res.code, 130);
  assert.match(res.stderr, /SIGTERM again: exiting now/);
  // "At once" judged by order, not by a clock a loaded machine stretches: the requests in flight decode for
  // about 20 s, so a run that waited out its 2 s grace would have recorded them aborted and written
  // summary.json before exiting; this one left before either.
  assert.equal(existsSync(join(out, 'summary.json')), false, 'exited before the grace ended and the summary was written');
  assert.ok(!existsSync(join(out, 'requests.jsonl')) || readFileSync(join(out, 'requests.jsonl'), 'utf8').trim() === '', 'no in-flight request was recorded aborted');
  assert.ok(tookMs < 10_000, `exited ${tookMs} ms after the first signal`);
});

test('the documented Kubernetes Job starts each shard with exec node, never npx, so SIGTERM to PID 1 reaches the run; the merge shell leaves on SIGTERM', () => {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'docs/k8s-soak-job.yaml'), 'utf8')).map(
    (d) => d.toJS() as { spec: { template: { spec: { containers: { command: string[]; args: string[] }[] } } } },
  );
  const [shard, merge] = docs.flatMap((d) => d.spec.template.spec.containers.map((c) => [...c.command, ...c.args].join(' ')));
  assert.match(shard!, /\bexec node dist\/src\/cli\.js run /, shard);
  // The merge takes seconds and runs the trend after it: no exec, a trap that exits at once instead.
  assert.match(merge!, /trap 'exit 143' TERM INT/, merge);
  assert.match(merge!, /node dist\/src\/cli\.js merge .* --history /, merge);
  for (const command of [shard!, merge!]) assert.doesNotMatch(command, /npx/, command);
});

test('SIGTERM to the launcher as Kubernetes sends it to PID 1 (sh -c "… exec node … run …"): exit 130 and a complete results folder', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  const file = workloadFile(dir, '{decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 24}');
  // The shape of the Job's command: a shell that sets things up, then execs node.
  const script = `RUN_ID="\${RUN_ID:-$(date -u +%F)}" && exec ${NODE_CLI} run ${file} --out ${out} --label run="$RUN_ID"`;
  let pid = 0;
  const running = runShell(script, (p) => (pid = p));
  await waitForLines(join(out, 'requests.jsonl'), 8, 30_000);
  process.kill(pid, 'SIGTERM');
  const res = await running;
  assert.equal(res.code, 130, res.stderr);
  assert.match(res.stderr, /SIGTERM: stopping/);
  const { records } = assertComplete(out);
  assert.ok(records.length >= 8);
});

for (const closePipes of [false, true]) {
  test(`a run whose parent dies without signalling it (re-parented) stops as on SIGTERM and writes its results${closePipes ? ', even with its terminal gone' : ''}`, async (t) => {
    const dir = tempDir(t);
    const out = join(dir, 'run');
    const pidFile = join(dir, 'pid');
    const file = workloadFile(dir, '{decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 24}');
    // The parent stays (no exec), as npx or a login shell would, and is then killed outright.
    const launcher = spawn('/bin/sh', ['-c', `${NODE_CLI} run ${file} --out ${out} & echo $! > ${pidFile}; wait`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    launcher.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    launcher.stdout.resume();
    let pid = 0;
    t.after(() => {
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    });
    await waitForLines(join(out, 'requests.jsonl'), 8, 30_000);
    pid = Number(readFileSync(pidFile, 'utf8'));
    launcher.kill('SIGKILL');
    // Its terminal went with the parent: the notice it prints on stderr and the summary table on stdout meet
    // closed pipes (EPIPE), which must not end the run before it has written its results.
    if (closePipes) {
      launcher.stdout.destroy();
      launcher.stderr.destroy();
    }
    const until = Date.now() + 30_000;
    while (alive(pid) && Date.now() < until) await sleep(100);
    assert.equal(alive(pid), false, 'roundload ended by itself after its parent died');
    if (!closePipes) assert.match(stderr, /parent process \d+ exited .*SIGTERM: stopping/);
    const { records } = assertComplete(out);
    assert.ok(records.length >= 8);
  });
}

/** Runs `script` with /bin/sh -c in the repo root, like a container command; resolves when it ends. */
function runShell(script: string, onSpawn: (pid: number) => void): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', script], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    if (child.pid !== undefined) onSpawn(child.pid);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

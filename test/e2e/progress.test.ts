// Whole runs through the CLI, read as a person (or a CI log) would: progress lines on stderr while a piped
// run goes, hangs announced when they happen, the verdict banner first and last, --quiet and --json, and
// the live line on a real terminal (a pty from `script`) fitting its width, in colour unless NO_COLOR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stripVTControlCharacters } from 'node:util';
import type { Summary } from '../../src/analysis/index.js';
import { runCli, tempDir } from '../helpers/tmp.js';
import { cliArgs, ROOT } from '../helpers/root.js';

const PROGRESS = /^\[\d+:\d\d\] (\d+:\d\d left|time up, finishing) · \d+ req · [\d.]+ req\/s · [\d.]+ tok\/s · TTFT (p50 [\d.]+ m?s p99 [\d.]+ m?s|–) · \d+ errors? · \d+ hangs? · \d+ in flight/;

/** Runs the CLI, noting when each complete stderr line and the first stdout byte arrived. */
async function timedRun(args: string[], env: Record<string, string> = {}, onLine: (text: string) => void = () => {}) {
  const lines: { text: string; atMs: number }[] = [];
  let partial = '';
  let stdoutAtMs: number | null = null;
  const res = await runCli(args, {
    timeoutMs: 90_000,
    env,
    onData: (from, text) => {
      const now = performance.now();
      if (from === 'stdout') {
        stdoutAtMs ??= now;
        return;
      }
      partial += text;
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        lines.push({ text: line, atMs: now });
        onLine(line);
      }
    },
  });
  return { res, lines, stdoutAtMs: stdoutAtMs ?? Infinity };
}

test('a 12 s run piped to a file, progress left at its default, prints its first progress line at 10 s and ends with the PASS banner; its summary has 10 or more auto windows', async (t) => {
  const out = join(tempDir(t), 'run');
  const { res, lines } = await timedRun(['run', 'workloads/smoke.yaml', '--duration', '12s', '--out', out]);
  assert.equal(res.code, 0, res.stderr);
  const progress = lines.filter((l) => PROGRESS.test(l.text));
  t.diagnostic(progress.map((l) => l.text).join('\n'));
  assert.ok(progress.length >= 1, res.stderr);
  // The clock floors to whole seconds and the interval starts a moment before the run's own clock: a line due
  // at 10 s can read 0:09 (the full suite met it once).
  assert.match(progress[0]!.text, /^\[0:(09|1[0-2])\] (0:0\d left|time up, finishing) · /, 'the default interval piped is 10 s');
  assert.ok(
    progress.every((l) => /\bdecode\.running=\d+/.test(l.text)),
    "the deployment's key gauges, by target",
  );
  const stdout = res.stdout.trimEnd().split('\n');
  assert.equal(stdout[0], `PASS · results ${out}`);
  assert.equal(stdout.at(-1), `PASS · results ${out}`);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  assert.deepEqual(summary.window, { window_s: 1, auto: true, basis: 'auto: 1 s, the shortest, for a planned 12 s run' });
  assert.ok(summary.windows.length >= 10, `${summary.windows.length} windows`);
  assert.match(res.stdout, /^windows {4}\d+ of 1 s {2}· {2}auto: 1 s, the shortest, for a planned 12 s run$/m);
});

test('a hang run announces each hang on its own line while the run goes on, then ends with FAIL (exit 1) naming the hangs', async (t) => {
  const out = join(tempDir(t), 'run');
  const started = performance.now();
  const { res, lines, stdoutAtMs } = await timedRun([
    'run',
    'workloads/smoke.yaml',
    '--duration',
    '6s',
    '--progress',
    '1s',
    '--out',
    out,
    '--set',
    'watchdog.stall_ms=1000',
    '--set',
    'engine.faults=[{kind: stall_mid_stream, after_chunks: 3, from_round: 2, times: 2}]',
  ]);
  assert.equal(res.code, 1, res.stderr);
  assert.ok(lines.filter((l) => PROGRESS.test(l.text)).length >= 2, 'a progress line every second of 6 s');
  const hangs = lines.filter((l) => / HANG /.test(l.text));
  t.diagnostic(lines.map((l) => `${((l.atMs - started) / 1000).toFixed(2)} s  ${l.text}`).join('\n'));
  assert.equal(hangs.length, 2, res.stderr);
  for (const h of hangs) {
    assert.match(h.text, /^\[0:0\d\] HANG a\d-c\d round 2 \(agent \d\): mid_stream hang \(stall_ms = 1000 ms\), silent \d+\.\d s, 3 chunks in · socket c\d request 2$/);
    // As it happened: a progress line of the running run came after it, and it reached us well before the summary.
    const index = lines.indexOf(h);
    assert.ok(
      lines.slice(index + 1).some((l) => PROGRESS.test(l.text) && / [12] hangs? /.test(l.text)),
      'a later progress line counts it',
    );
    assert.ok(h.atMs < stdoutAtMs - 1000, `announced ${((stdoutAtMs - h.atMs) / 1000).toFixed(1)} s before the run ended`);
  }
  assert.equal(res.stdout.trimEnd().split('\n').at(-1), `FAIL (exit 1): 2 hung requests > limit 0 · results ${out}`);
});

/** A real /metrics endpoint on loopback, SGLang's names, that the test can take down and bring back. */
async function metricsServer(port = 0): Promise<Server> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end('# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name="m"} 3\n# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{model_name="m"} 0\n');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

async function takeDown(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

test('a monitored target that stops answering mid-run is announced down at once, and back up when it answers again', async (t) => {
  let server = await metricsServer();
  const port = (server.address() as AddressInfo).port;
  t.after(() => takeDown(server).catch(() => {}));
  const out = join(tempDir(t), 'run');
  let downAtMs: number | null = null;
  let upAtMs: number | null = null;
  // Widened on purpose: it is assigned in a callback, which narrowing does not see.
  let flips = null as Promise<void> | null;
  // Once the run's line shows the target's gauges, take the server away for 2.5 s (two progress ticks), then bring it back on its port.
  const flip = async (): Promise<void> => {
    await takeDown(server);
    downAtMs = performance.now();
    await sleep(2500);
    server = await metricsServer(port);
    upAtMs = performance.now();
  };
  const { res, lines } = await timedRun(
    ['run', 'workloads/smoke.yaml', '--duration', '6s', '--progress', '1s', '--out', out, '--set', `monitor.targets=[{name: decode, url: "http://127.0.0.1:${port}"}]`],
    {},
    (text) => {
      if (flips === null && PROGRESS.test(text) && / running=3 /.test(text)) flips = flip();
    },
  );
  assert.ok(flips !== null, `the target's gauges were shown: ${res.stderr}`);
  await flips;
  t.diagnostic(lines.map((l) => l.text).join('\n'));
  assert.equal(res.code, 0, res.stderr);
  const down = lines.filter((l) => / MONITOR decode down /.test(l.text));
  const up = lines.filter((l) => / MONITOR decode back up /.test(l.text));
  assert.equal(down.length, 1, 'announced once, not at every failed scrape');
  assert.equal(up.length, 1);
  assert.match(down[0]!.text, /^\[0:0\d\] MONITOR decode down \(last good scrape \d+ ms ago\): .+ \(http:\/\/127\.0\.0\.1:\d+\/metrics\)$/);
  assert.match(up[0]!.text, /^\[0:0\d\] MONITOR decode back up after \d+\.\d s down$/);
  assert.ok(downAtMs !== null && upAtMs !== null && down[0]!.atMs > downAtMs && down[0]!.atMs < upAtMs, 'announced while it was down');
  assert.ok(
    lines.some((l) => PROGRESS.test(l.text) && / DOWN decode /.test(l.text) && l.atMs > down[0]!.atMs && l.atMs < up[0]!.atMs),
    'a line while it was down says so',
  );
});

test('--quiet prints no progress or announcements; --json keeps stdout pure JSON while progress stays on stderr', async (t) => {
  const args = (out: string) => [
    'run',
    'workloads/smoke.yaml',
    '--rounds',
    '3',
    '--progress',
    '200ms',
    '--json',
    '--out',
    out,
    '--set',
    'watchdog.stall_ms=800',
    '--set',
    'engine.faults=[{kind: stall_mid_stream, times: 1}]',
  ];
  const quiet = await runCli([...args(join(tempDir(t), 'q')), '--quiet', '--rounds', '1']);
  assert.equal(quiet.code, 1, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /^\[\d+:\d\d\]/m, quiet.stderr);
  assert.match(quiet.stderr, /^roundload: smoke: 4 agents × 1 round → embedded engine$/m, 'the start line stays, in the singular');
  assert.equal((JSON.parse(quiet.stdout) as Summary).totals.hangs, 1, 'stdout is summary.json alone');
  const json = await runCli(args(join(tempDir(t), 'j')));
  assert.equal(json.code, 1, json.stderr);
  assert.match(json.stderr, /^\[0:0\d\] HANG /m);
  assert.match(json.stderr, /^\[0:0\d\] \d+\/12 req · /m, 'a run of rounds says requests done of planned');
  assert.equal((JSON.parse(json.stdout) as Summary).totals.requests, 12);
});

const SCRIPT = spawnSync('script', ['--version']).status === 0;

/** Runs the CLI on a real terminal of `columns` (a pty from util-linux `script`); returns what the terminal got. */
function onTerminal(args: string[], columns: number, env: Record<string, string | undefined>): Promise<string> {
  const root = ROOT;
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${columns} rows 30; exec ${[process.execPath, ...cliArgs(...args)].map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

/** The live line's frames: each redraw starts at column 0 (ESC [1G) and ends clearing the rest (ESC [0K). */
function frames(terminal: string): string[] {
  return [...terminal.matchAll(/\x1b\[1G([^\n]*?)\x1b\[0?K/g)].map((m) => m[1]!);
}

test('on a real terminal the live line fits 40 columns, whole fields only, in colour; NO_COLOR turns colour off', { skip: SCRIPT ? false : 'util-linux script is not installed' }, async (t) => {
  const args = (out: string) => ['run', 'workloads/smoke.yaml', '--rounds', '4', '--progress', '200ms', '--out', out];
  const colored = await onTerminal(args(join(tempDir(t), 'c')), 40, { NO_COLOR: undefined });
  const shown = frames(colored);
  t.diagnostic(shown.map((f) => JSON.stringify(stripVTControlCharacters(f))).join('\n'));
  assert.ok(shown.length >= 2, `redrawn while it runs: ${JSON.stringify(colored.slice(0, 600))}`);
  for (const f of shown) {
    const visible = stripVTControlCharacters(f);
    assert.ok(visible.length <= 39, `"${visible}" is ${visible.length} wide`);
    assert.match(visible, /^\[\d+:\d\d\]( \d+\/16 req)?( · \d+ errors?)?( · \d+ hangs?)?( · \d+ in flight)?$/, 'whole fields, the most important ones');
  }
  assert.match(shown.join(''), /\x1b\[36m\[\d+:\d\d\]\x1b\[39m/, 'the time in colour');
  assert.match(colored, /\x1b\[1m\x1b\[32mPASS\x1b\[39m/, 'the banner in colour (stdout is the terminal too)');
  const plain = await onTerminal([...args(join(tempDir(t), 'p')), '--rounds', '2', '--progress', '100ms'], 40, { NO_COLOR: '1' });
  assert.ok(frames(plain).length >= 1, 'still a live line');
  assert.doesNotMatch(plain, /\x1b\[[0-9;]*m/, 'no colour codes at all');
  assert.match(plain, /^PASS · results /m);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parseAbFile } from '../../src/config/index.js';
import { runAb, abOrder, steadyTokensPerS, waitHealthy, runShell } from '../../src/compare/index.js';
import { ArmError, DifferentWorkloadsError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

const TINY = `workload:
  window_s: 0.5
  agents: {count: 1, rounds: 2, think_time_ms: 0}
  conversation: {tools: none, system_prompt_tokens: 20, first_user_tokens: 10, max_tokens: 8}
  engine: {decode_step_ms: 1, output_tokens_min: 4, output_tokens_max: 8}
`;

test('arms run in turn, each repeat starting one arm later (A B, B A), each run between its setup and teardown, and the log keeps their output', async (t) => {
  const dir = tempDir(t);
  const plan = await parseAbFile(
    `${TINY}repeats: 2
arms:
  - name: A
    setup: echo "setup $ROUNDLOAD_ARM $ROUNDLOAD_REPEAT"
    teardown: echo "teardown $ROUNDLOAD_ARM" >&2
  - name: B
    set: [engine.decode_speedup=2]
    setup: echo "setup $ROUNDLOAD_ARM $ROUNDLOAD_REPEAT"
    teardown: echo "teardown $ROUNDLOAD_ARM"
`,
    join(dir, 'ab.yaml'),
  );
  assert.deepEqual(
    abOrder(plan.arms, 3).map((s) => `${plan.arms[s.arm]!.name}${s.repeat}`),
    ['A1', 'B1', 'B2', 'A2', 'A3', 'B3'],
  );
  const lines: string[] = [];
  const result = await runAb({ plan, out: join(dir, 'ab'), log: (l) => lines.push(l) });
  assert.equal(result.status, 'completed');
  assert.deepEqual(
    result.runs.map((r) => `${r.arm}${r.repeat}:${r.status}`),
    ['A1:completed', 'B1:completed', 'B2:completed', 'A2:completed'],
  );
  assert.deepEqual(
    result.runs.map((r) => r.dir.slice(r.dir.lastIndexOf('/') + 1)),
    ['01-A-r1', '02-B-r1', '03-B-r2', '04-A-r2'],
  );
  const log = readFileSync(join(dir, 'ab', 'ab.log'), 'utf8');
  const output = log
    .split('\n')
    .filter((l) => /\[(A|B) (setup|teardown)\]/.test(l))
    .map((l) => l.replace(/^\S+ +/, ''));
  assert.deepEqual(output, [
    '[A setup] setup A 1',
    '[A teardown] teardown A',
    '[B setup] setup B 1',
    '[B teardown] teardown B',
    '[B setup] setup B 2',
    '[B teardown] teardown B',
    '[A setup] setup A 2',
    '[A teardown] teardown A',
  ]);
  // Each run sits between its arm's setup and teardown.
  const at = (needle: string, from = 0) => log.indexOf(needle, from);
  const firstB = at('[B setup] setup B 1');
  assert.ok(at('arm A r1: completed') < firstB && firstB < at('arm B r1: completed') && at('arm B r1: completed') < at('[B teardown]'));
  assert.deepEqual(
    lines.filter((l) => l.includes('setup A 1')),
    ['  [A setup] setup A 1'],
    'the output also goes to the log callback (stderr)',
  );
  for (const r of result.runs) {
    const manifest = JSON.parse(readFileSync(join(r.dir, 'run.json'), 'utf8')) as { labels: Record<string, string>; workload: { engine: { decode_speedup: number } } };
    assert.deepEqual(manifest.labels, { arm: r.arm, repeat: String(r.repeat) });
    assert.equal(manifest.workload.engine.decode_speedup, r.arm === 'B' ? 2 : 1, 'each arm run started its own engine with its settings');
  }
  assert.equal(result.comparisons.length, 1);
  const c = result.comparisons[0]!;
  assert.equal(c.a.runs.length, 2, 'two runs a side, one value each');
  assert.equal(c.method, 'paired');
  assert.deepEqual(c.rule, { min_effect_pct: 3, min_effect_points: 1, alpha: 0.05, looks: 'fixed', max_pairs: null });
  assert.deepEqual(c.pairs, [
    [0, 0],
    [1, 1],
  ]);
  // Two pairs: an interval but no call (3 are needed), however far apart the arms are.
  assert.equal(c.phases[0]!.rows.find((r) => r.figure === 'error_rate')!.verdict, 'inconclusive');
  assert.equal(result.ended, '2 pairs run');
  // ab.log ends with the same final calls the terminal prints.
  assert.match(log, /ab: ended after 2 pairs: 2 pairs run\n/);
  assert.match(log, /errors\+hangs % +0\.000 +0\.000 +\+0\.00 pt .* inconclusive \(~1 more\)\n/);
  const ab = JSON.parse(readFileSync(join(dir, 'ab', 'ab.json'), 'utf8')) as { status: string; runs: unknown[] };
  assert.equal(ab.status, 'completed');
});

test('a run that fails (its target refuses) stays in the A/B and counts against its arm: two failures stop it with that arm worse', async (t) => {
  const dir = tempDir(t);
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const plan = await parseAbFile(`${TINY}arms:\n  - name: A\n  - name: B\n    set: [target.url=http://127.0.0.1:${port}]\n`, join(dir, 'ab.yaml'));
  const lines: string[] = [];
  const result = await runAb({ plan, out: join(dir, 'ab'), log: (l) => lines.push(l) });
  assert.deepEqual(
    result.runs.filter((r) => r.status !== 'not run').map((r) => `${r.arm}${r.repeat}:${r.status}`),
    ['A1:completed', 'B1:failed', 'B2:failed'],
    lines.join('\n'),
  );
  assert.equal(result.failedArm, 'B');
  assert.match(result.ended, /^arm B failed in 2 runs \(run 2: .*127\.0\.0\.1.*; run 3: /);
  const errors = result.comparisons[0]!.phases[0]!.rows.find((r) => r.figure === 'error_rate')!;
  assert.equal(errors.verdict, 'worse');
  assert.deepEqual(errors.values, { a: [0], b: [100] });
  assert.match(errors.text, /arm B failed in 2 runs/);
  const ab = JSON.parse(readFileSync(join(dir, 'ab', 'ab.json'), 'utf8')) as { failed_arm: string; runs: { status: string }[] };
  assert.equal(ab.failed_arm, 'B');
});

test('three arms: each is judged against the first by the stopping rule, alpha split between them', async (t) => {
  const dir = tempDir(t);
  const plan = await parseAbFile(`${TINY}until: {max_pairs: 3, figures: [errors]}\narms:\n  - name: A\n  - name: B\n  - name: C\n    set: [engine.decode_speedup=2]\n`, join(dir, 'ab.yaml'));
  const result = await runAb({ plan, out: join(dir, 'ab') });
  assert.deepEqual(
    result.comparisons.map((c) => `${c.b.name} vs ${c.a.name}: ${c.rule.looks} alpha ${c.rule.alpha}`),
    ['B vs A: sequential alpha 0.025', 'C vs A: sequential alpha 0.025'],
  );
  // Rounds A B C, B C A, C A B: each arm's run of a round pairs with the baseline's of the same round.
  assert.deepEqual(result.runs.map((r) => r.arm).join(''), 'ABCBCACAB');
  for (const c of result.comparisons) assert.equal(c.pairs.length, 3);
  for (const c of result.comparisons) assert.equal(c.phases[0]!.rows.find((r) => r.figure === 'error_rate')!.verdict, 'equivalent');
});

test('a failing setup stops the A/B with the arm, the exit code and the output; the teardown still runs', async (t) => {
  const dir = tempDir(t);
  const plan = await parseAbFile(`${TINY}arms:\n  - name: A\n    setup: echo cannot restart; exit 3\n    teardown: echo cleaned\n  - name: B\n`, join(dir, 'ab.yaml'));
  await assert.rejects(runAb({ plan, out: join(dir, 'ab') }), (e: unknown) => e instanceof ArmError && /arm A setup failed \(exit 3\)/.test(e.message) && /cannot restart/.test(e.message));
  const log = readFileSync(join(dir, 'ab', 'ab.log'), 'utf8');
  assert.match(log, /\[A teardown\] cleaned/);
  assert.doesNotMatch(log, /run 2\/4/, 'nothing runs after the failure');
  assert.equal(existsSync(join(dir, 'ab', '01-A-r1', 'run.json')), false, 'the run itself never started');
  assert.equal((JSON.parse(readFileSync(join(dir, 'ab', 'ab.json'), 'utf8')) as { status: string }).status, 'failed');
});

test('a setup past command_timeout_s is killed, group and all, within the deadline', async () => {
  const started = Date.now();
  const result = await runShell('sleep 30 & sleep 30; echo never', { timeoutMs: 300 });
  assert.equal(result.timedOut, true);
  assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
});

test('the health wait polls until a 200, and fails clearly when none comes in time', async (t) => {
  let calls = 0;
  const server = createServer((_req, res) => {
    calls += 1;
    res.writeHead(calls < 3 ? 503 : 200).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
  assert.equal(await waitHealthy(url, 5000, 20), 3);
  calls = -1_000_000;
  // Long enough that a loaded machine still gets an answer in (the message quotes the last one), and bounded:
  // each GET is cut at the time left, so the wait ends at its deadline (plus how late the loop runs).
  const started = performance.now();
  await assert.rejects(waitHealthy(url, 1500, 50), (e: unknown) => e instanceof ArmError && /did not answer 200 within 1\.5 s \(last: HTTP 503\)/.test(e.message));
  const waitedMs = performance.now() - started;
  assert.ok(waitedMs >= 1490 && waitedMs < 1500 + 5000, `gave up after ${Math.round(waitedMs)} ms`);
  assert.ok(calls > -1_000_000 + 2, 'it kept polling until the deadline');
});

test("a last poll cut by the wait's own deadline keeps the server's last real answer in the message", async (t) => {
  let calls = 0;
  const server = createServer((_req, res) => {
    calls += 1;
    if (calls === 1) res.writeHead(503).end();
    // Later polls never get an answer: each is cut at the time left, not by the server.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
  await assert.rejects(waitHealthy(url, 800, 20), (e: unknown) => e instanceof ArmError && /within 0\.8 s \(last: HTTP 503\)/.test(e.message));
  assert.ok(calls >= 2, `polled ${calls} times`);
});

test('an arm whose set changes the load (not only the server) is refused before anything runs', async (t) => {
  const dir = tempDir(t);
  const plan = await parseAbFile(`${TINY}arms:\n  - name: A\n  - name: B\n    set: [agents.count=2]\n`, join(dir, 'ab.yaml'));
  await assert.rejects(runAb({ plan, out: join(dir, 'ab') }), (e: unknown) => e instanceof DifferentWorkloadsError && /arm B changes the load itself.*agents\.count: 1 vs 2/.test(e.message));
  assert.equal(existsSync(join(dir, 'ab')), false);
});

test('no arm always runs second: each repeat starts one arm later, so every arm takes every position alike', () => {
  const names = (arms: string[], repeats: number) =>
    abOrder(
      arms.map((name) => ({ name })),
      repeats,
    ).map((s) => arms[s.arm]);
  assert.deepEqual(names(['A', 'B'], 4), ['A', 'B', 'B', 'A', 'A', 'B', 'B', 'A']);
  assert.deepEqual(names(['A', 'B', 'C'], 3), ['A', 'B', 'C', 'B', 'C', 'A', 'C', 'A', 'B']);
  // Over a whole cycle of repeats each arm runs in each position once.
  const order = abOrder([{ name: 'A' }, { name: 'B' }, { name: 'C' }], 3);
  for (let position = 0; position < 3; position += 1) {
    assert.deepEqual(new Set(order.filter((_, i) => i % 3 === position).map((s) => s.arm)), new Set([0, 1, 2]));
  }
});

test('the output tok/s ab prints per run is the mean over steady windows, as compare takes it, not the whole-span figure', () => {
  const w = (output_tokens_per_s: number, steady: boolean) => ({ output_tokens_per_s, steady });
  // A ramp-up and a tail around three steady windows.
  const summary = { windows: [w(100, false), w(900, true), w(1000, true), w(1100, true), w(50, false)] } as unknown as Parameters<typeof steadyTokensPerS>[0];
  assert.deepEqual(steadyTokensPerS(summary), { tokensPerS: 1000, windows: 3 });
  assert.equal(steadyTokensPerS({ windows: [w(100, false)] } as unknown as Parameters<typeof steadyTokensPerS>[0]), null);
});

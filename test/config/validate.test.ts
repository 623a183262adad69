// validateCommand lives in src/commands; its unit test sits here beside the loader it reports on.
import { after, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateCommand } from '../../src/commands/validate.js';
import { UsageError, WorkloadError } from '../../src/errors.js';
import { runCli, tempDir } from '../helpers/tmp.js';

/** Runs `fn` with process.stdout.write captured; returns what was written. The test runner's own messages (bytes,
 * written while `fn` awaits a file) pass through: validate writes strings. */
async function captureStdout(fn: () => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array) => {
    if (typeof chunk !== 'string') return original(chunk);
    chunks.push(chunk);
    return true;
  };
  try {
    await fn();
  } finally {
    process.stdout.write = original;
  }
  return chunks.join('');
}

describe('validateCommand', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'roundload-validate-'));
  after(() => rm(dir, { recursive: true, force: true }));

  it('a valid workload prints one ✓ line with name, agents × rounds and target', async () => {
    const file = join(dir, 'smoke.yaml');
    await writeFile(file, 'agents:\n  count: 3\n');
    assert.equal(await captureStdout(() => validateCommand(file, {})), `✓ ${file}: valid (name smoke, 3 agents × 8 rounds, target embedded engine)\n`);
    assert.equal(
      await captureStdout(() => validateCommand(file, { set: ['target.url=https://llm.example', 'agents.rounds=2'] })),
      `✓ ${file}: valid (name smoke, 3 agents × 2 rounds, target https://llm.example)\n`,
    );
  });

  it('--json prints the resolved workload', async () => {
    const file = join(dir, 'json.yaml');
    await writeFile(file, 'agents:\n  count: 5\n');
    const parsed: unknown = JSON.parse(await captureStdout(() => validateCommand(file, { json: true })));
    assert.ok(parsed !== null && typeof parsed === 'object');
    assert.equal((parsed as { name: string }).name, 'json');
    assert.equal((parsed as { agents: { count: number } }).agents.count, 5);
  });

  it('an invalid workload throws the WorkloadError whose message is the full report', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'agents:\n  rouns: 3\n');
    await assert.rejects(validateCommand(file, {}), (error: unknown) => {
      assert.ok(error instanceof WorkloadError);
      assert.equal(error.message, `invalid workload ${file}:\n  ${file}:2:3  agents.rouns  unknown key "rouns" (did you mean "rounds"?)`);
      return true;
    });
  });

  it('an ab file is validated as `ab` reads it: its base workload file, each arm with its set, and the stopping rule', async () => {
    await writeFile(join(dir, 'base.yaml'), 'agents:\n  count: 6\n');
    const file = join(dir, 'ab.yaml');
    await writeFile(
      file,
      'workload: base.yaml\nuntil: {min_effect_pct: 3, figures: [decode, errors]}\narms:\n  - name: before\n  - name: after\n    set: [engine.decode_speedup=1.1, engine.decode_step_ms=9]\n',
    );
    assert.equal(
      await captureStdout(() => validateCommand(file, {})),
      [
        `✓ ${file}: valid ab file (workload ${join(dir, 'base.yaml')}: name base, 6 agents × 8 rounds, target embedded engine; 2 arms)`,
        '  A  before  the base workload (the baseline)',
        '  B  after   set engine.decode_speedup=1.1, engine.decode_step_ms=9',
        '  stopping rule: pairs until every figure of decode, errors is decided within ±3% (±1 point for rates), at most 10 pairs',
        '',
      ].join('\n'),
    );
    const parsed = JSON.parse(await captureStdout(() => validateCommand(file, { json: true }))) as { arms: { name: string; workload: { engine: { decode_speedup: number } } }[] };
    assert.deepEqual(
      parsed.arms.map((a) => [a.name, a.workload.engine.decode_speedup]),
      [
        ['before', 1],
        ['after', 1.1],
      ],
    );
  });

  it('the ab file that ships validates, with its stopping rule', async () => {
    const out = await captureStdout(() => validateCommand('workloads/ab-target-ctas.yaml', {}));
    assert.match(out, /^✓ workloads\/ab-target-ctas\.yaml: valid ab file \(inline workload: name ab-target-ctas, sweep of 64 → 96 agents \(10s each\) × 8 rounds/);
    assert.match(out, /\n {2}B {2}ctas512 {3}set engine\.decode_speedup=1\.128\n/);
    assert.match(out, /\n {2}stopping rule: pairs until every figure of decode, errors is decided within ±3% \(±1 point for rates\), at most 10 pairs\n$/);
  });

  it("a bad ab file throws the ab loader's located report: a wrong key in an arm, a wrong type, a bad set entry", async () => {
    const file = join(dir, 'bad-ab.yaml');
    await writeFile(file, 'workload:\n  agents: {count: 2}\nrepeats: two\narms:\n  - name: A\n    sett: [engine.decode_speedup=2]\n  - name: B\n');
    await assert.rejects(validateCommand(file, {}), (error: unknown) => {
      assert.ok(error instanceof WorkloadError);
      assert.equal(
        error.message,
        [`invalid ab file ${file}:`, `  ${file}:3:10  repeats  expected a number, got string "two"`, `  ${file}:6:5  arms.0.sett  unknown key "sett" (did you mean "set"?)`].join('\n'),
      );
      return true;
    });
    await writeFile(file, 'workload:\n  agents: {count: 2}\narms:\n  - name: A\n  - name: B\n    set:\n      - engine.decode_speedup=fast\n');
    await assert.rejects(validateCommand(file, {}), (error: unknown) => {
      assert.ok(error instanceof WorkloadError);
      assert.match(error.message, new RegExp(`^  ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:7:9  workload\\.engine\\.decode_speedup  expected a number.*\\(arms\\.1\\.set\\.0\\)$`, 'm'));
      return true;
    });
  });

  it('--set is refused for an ab file (its arms carry their own set)', async () => {
    const file = join(dir, 'ab-set.yaml');
    await writeFile(file, 'workload: {}\narms: [{name: A}, {name: B}]\n');
    await assert.rejects(validateCommand(file, { set: ['agents.count=2'] }), (error: unknown) => error instanceof UsageError && /is an ab file: --set applies to a workload/.test(error.message));
  });
});

test('`roundload validate` on an ab file: exit 0 with its arms; a mistake in an arm exits 2 naming line, column and field', async (t) => {
  const good = await runCli(['validate', 'workloads/ab-target-ctas.yaml']);
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stdout, /valid ab file .*; 2 arms\)\n {2}A {2}reverted .*\n {2}B {2}ctas512 {3}set engine\.decode_speedup=1\.128\n/);
  const file = join(tempDir(t), 'ab.yaml');
  await writeFile(file, 'workload: {}\narms:\n  - name: A\n  - name: B\n    labels: {ctas: 512}\n');
  const bad = await runCli(['validate', file]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /invalid ab file .*ab\.yaml:\n +.*ab\.yaml:5:20 +arms\.1\.labels\.ctas +expected a string, got number/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Lexer } from 'yaml';
import { loadAbFile, loadEngineFaults, loadEngineSettings, loadWorkload, parseWorkload } from '../../src/config/index.js';
import { WorkloadError } from '../../src/errors.js';
import { runCli, tempDir } from '../helpers/tmp.js';

/** A workload with `n` labels (valid) or `n` stray top-level keys (each one a problem). */
function manyKeys(n: number, kind: 'labels' | 'unknown'): string {
  const lines = kind === 'labels' ? ['labels:'] : [];
  for (let i = 0; i < n; i += 1) lines.push(kind === 'labels' ? `  k${i}: v${i}` : `key${i}: ${i}`);
  return `${lines.join('\n')}\n`;
}

/** The fastest of `times` runs of `work` (the fastest is the one least disturbed by other work). */
function fastestMs(work: () => void, times: number): number {
  let best = Infinity;
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    work();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

function validate(text: string): void {
  try {
    parseWorkload(text, 'big.yaml');
  } catch (error) {
    assert.ok(error instanceof WorkloadError);
  }
}

function lex(text: string): void {
  let tokens = 0;
  for (const _ of new Lexer().lex(text)) tokens += 1;
  assert.ok(tokens > 0);
}

describe('large workload files', () => {
  it('a file over 1 MiB is refused at once with a located error (exit 2), without being parsed', async (t) => {
    const file = join(tempDir(t), 'huge.yaml');
    // Not even YAML: a parse would report a syntax error instead of the size.
    writeFileSync(file, `: [\n${'#'.repeat(1024 * 1024)}`);
    await assert.rejects(loadWorkload(file), (error: unknown) => {
      assert.ok(error instanceof WorkloadError);
      assert.equal(error.exitCode, 2);
      assert.deepEqual(
        error.issues.map((i) => i.where),
        [file],
      );
      assert.match(error.issues[0]?.message ?? '', /larger than 1 MiB/);
      return true;
    });
    await assert.rejects(loadAbFile(file), /larger than 1 MiB/);
    // The engine's own files (`roundload engine --settings/--faults`) too.
    await assert.rejects(loadEngineSettings(file), /larger than 1 MiB/);
    await assert.rejects(loadEngineFaults(file), /larger than 1 MiB/);
    const res = await runCli(['validate', file], { timeoutMs: 30_000 });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /larger than 1 MiB/);
    assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
  });

  it('a file of exactly 1 MiB is read and validated', async (t) => {
    const file = join(tempDir(t), 'limit.yaml');
    const head = 'name: limit\n';
    writeFileSync(file, `${head}#${'x'.repeat(1024 * 1024 - head.length - 2)}\n`);
    assert.equal((await loadWorkload(file)).name, 'limit');
  });

  it('a 20k-key file validates in a few times what it takes just to tokenize it (40k keys took 9-22 s)', () => {
    // yaml's duplicate-key check and the issue locator each compared every key with every other one. The
    // baseline is yaml's own lexer over the same text (linear, measured here, so a busy machine slows both):
    // validation is about 7× it now, and was 80-400× it at 40k keys (40-200× at 20k, still far past the bound).
    for (const kind of ['labels', 'unknown'] as const) {
      const text = manyKeys(20_000, kind);
      validate(manyKeys(2_000, kind)); // warm up the parser and the schema
      const lexMs = fastestMs(() => lex(text), 3);
      const validateMs = fastestMs(() => validate(text), 2);
      const ratio = validateMs / lexMs;
      assert.ok(ratio < 40, `${kind}: tokenizing ${lexMs.toFixed(0)} ms, validating ${validateMs.toFixed(0)} ms: ×${ratio.toFixed(1)}`);
    }
  });

  it('a file with thousands of problems lists the first hundred in file order, then how many more', () => {
    try {
      parseWorkload(manyKeys(5_000, 'unknown'), 'big.yaml');
      assert.fail('expected a WorkloadError');
    } catch (error) {
      assert.ok(error instanceof WorkloadError);
      assert.equal(error.issues.length, 101);
      assert.equal(error.issues[0]?.where, 'big.yaml:1:1');
      assert.equal(error.issues[99]?.where, 'big.yaml:100:1');
      assert.deepEqual(error.issues[100], { where: 'big.yaml', field: '', message: '… and about 4,900 more problems (fix these first)' });
    }
  });

  it('a repeated key is still refused, at the repeat', () => {
    try {
      parseWorkload('labels:\n  a: 1\n  b: 2\n  a: 3\nagents: {count: 1, count: 2}\n', 'dup.yaml');
      assert.fail('expected a WorkloadError');
    } catch (error) {
      assert.ok(error instanceof WorkloadError);
      assert.deepEqual(
        error.issues.map((i) => `${i.where} ${i.message}`),
        ['dup.yaml:4:3 YAML syntax: Map keys must be unique', 'dup.yaml:5:20 YAML syntax: Map keys must be unique'],
      );
    }
  });
});

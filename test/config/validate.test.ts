// validateCommand lives in src/commands; its unit test sits here beside the loader it reports on.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateCommand } from '../../src/commands/validate.js';
import { WorkloadError } from '../../src/errors.js';

/** Runs `fn` with process.stdout.write captured; returns what was written. */
async function captureStdout(fn: () => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
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
});

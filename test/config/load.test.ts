import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkload, parseWorkload, workloadSchema } from '../../src/config/index.js';
import { UsageError, WorkloadError, type WorkloadIssue } from '../../src/errors.js';

const FILE = 'workloads/test.yaml';

/** The issues parseWorkload throws for `text` (fails the test if it does not throw a WorkloadError). */
function issuesOf(text: string, overrides: Parameters<typeof parseWorkload>[2] = {}): readonly WorkloadIssue[] {
  try {
    parseWorkload(text, FILE, overrides);
  } catch (error) {
    assert.ok(error instanceof WorkloadError, `expected a WorkloadError, got ${String(error)}`);
    return error.issues;
  }
  assert.fail('expected the workload to be rejected');
}

describe('parseWorkload', () => {
  it('an empty file gives all defaults, named after the file', () => {
    const w = parseWorkload('', FILE);
    const defaults = workloadSchema.parse({});
    assert.deepEqual(w, { ...defaults, name: 'test' });
    assert.equal(w.agents.count, 4);
    assert.equal(w.target.url, null);
  });

  it('a file of only comments is the default workload too', () => {
    assert.deepEqual(parseWorkload('# nothing yet\n', FILE), parseWorkload('', FILE));
  });

  it('the name defaults to the file basename without extension, sanitised to the name pattern', () => {
    assert.equal(parseWorkload('', 'dir/smoke.yaml').name, 'smoke');
    assert.equal(parseWorkload('', 'dir/my soak (v2).yml').name, 'my-soak-v2');
    assert.equal(parseWorkload('', '/x/ab.target.yaml').name, 'ab.target');
    assert.equal(parseWorkload('', 'dir/@@@.yaml').name, 'workload');
    assert.equal(parseWorkload('name: explicit\n', 'dir/smoke.yaml').name, 'explicit');
  });

  it('a typo in a key is reported at the exact line:col of the key, with a suggestion', () => {
    const issues = issuesOf('agents:\n  count: 2\n  rouns: 3\n');
    assert.deepEqual(issues, [{ where: `${FILE}:3:3`, field: 'agents.rouns', message: 'unknown key "rouns" (did you mean "rounds"?)' }]);
  });

  it('an unknown key with no close match lists the valid keys', () => {
    const [issue] = issuesOf('watchdog:\n  zzzzzz: 1\n');
    assert.equal(issue?.message, 'unknown key "zzzzzz"; valid keys: connect_ms, headers_ms, first_token_ms, stall_ms, total_ms, on_hang');
  });

  it('a wrong type names the line:col of the value, the field and what was found', () => {
    const issues = issuesOf('agents:\n  count: four\n');
    assert.deepEqual(issues, [{ where: `${FILE}:2:10`, field: 'agents.count', message: 'expected a number, got string "four"' }]);
  });

  it('a wrong enum value deep in a section lists the choices and suggests the closest', () => {
    const issues = issuesOf('agents:\n  connection: poool\n');
    assert.deepEqual(issues, [{ where: `${FILE}:2:15`, field: 'agents.connection', message: 'must be one of per-agent, pool; got string "poool" (did you mean "pool"?)' }]);
  });

  it('an unknown key deep inside (target.tls.cax) is located at that key', () => {
    const issues = issuesOf('target:\n  url: https://example.com\n  tls:\n    insecure: false\n    cax: ca.pem\n');
    assert.deepEqual(issues, [{ where: `${FILE}:5:5`, field: 'target.tls.cax', message: 'unknown key "cax" (did you mean "ca"?)' }]);
  });

  it('several errors are reported together, in file order', () => {
    const text = ['agents:', '  count: 0', '  rouns: 3', 'conversation:', '  tools: nonee', 'target:', '  url: ftp://x', 'bogus: 1', ''].join('\n');
    const issues = issuesOf(text);
    assert.deepEqual(
      issues.map((i) => [i.where, i.field]),
      [
        [`${FILE}:2:10`, 'agents.count'],
        [`${FILE}:3:3`, 'agents.rouns'],
        [`${FILE}:5:10`, 'conversation.tools'],
        [`${FILE}:7:8`, 'target.url'],
        [`${FILE}:8:1`, 'bogus'],
      ],
    );
    assert.equal(issues[0]?.message, 'must be at least 1, got number 0');
    assert.equal(issues[2]?.message, 'must be one of default, none, or a list; got string "nonee"');
    assert.equal(issues[3]?.message, 'must be an http:// or https:// URL, got string "ftp://x"');
  });

  it('an issue inside a list item is located at the item field', () => {
    const issues = issuesOf('conversation:\n  tools:\n    - name: read_file\n    - name: bad name\n');
    assert.deepEqual(issues, [{ where: `${FILE}:4:13`, field: 'conversation.tools.1.name', message: 'must be 1-64 letters, digits, _ or -, got string "bad name"' }]);
  });

  it('a cross-field rule on a defaulted field points at the nearest key present in the file', () => {
    const issues = issuesOf('# comment\nwatchdog:\n  headers_ms: 700000\n');
    assert.deepEqual(issues, [{ where: `${FILE}:2:1`, field: 'watchdog.total_ms', message: '600000 is shorter than headers_ms (700000); set headers_ms to at most 600000, or raise total_ms' }]);
  });

  it('a total_ms below a defaulted first_token_ms names the default and what to change', () => {
    const [issue] = issuesOf('watchdog:\n  total_ms: 60000\n');
    assert.equal(issue?.where, `${FILE}:2:13`);
    assert.equal(issue?.message, '60000 is shorter than first_token_ms (120000); set first_token_ms to at most 60000, or raise total_ms');
  });

  it('a YAML syntax error is located by line:col', () => {
    const issues = issuesOf('agents:\n  count: 2\n rounds: 3\n');
    assert.equal(issues.length >= 1, true);
    assert.match(issues[0]?.where ?? '', /^workloads\/test\.yaml:3:\d+$/);
    assert.match(issues[0]?.message ?? '', /^YAML syntax: /);
  });

  it('a duplicate key is a located YAML error', () => {
    const [issue] = issuesOf('agents:\n  count: 2\n  count: 3\n');
    assert.equal(issue?.where, `${FILE}:3:3`);
    assert.match(issue?.message ?? '', /unique/);
  });

  it('a file that is not a mapping is rejected at 1:1', () => {
    assert.deepEqual(issuesOf('- 1\n- 2\n'), [{ where: `${FILE}:1:1`, field: '', message: 'expected a mapping (key: value), got a list' }]);
  });

  it('the error message is the full report: a header line, then one line per issue', () => {
    try {
      parseWorkload('agents:\n  count: four\n  rouns: 3\n', FILE);
      assert.fail('expected a WorkloadError');
    } catch (error) {
      assert.ok(error instanceof WorkloadError);
      assert.equal(error.exitCode, 2);
      assert.equal(error.code, 'ERR_WORKLOAD');
      assert.equal(
        error.message,
        [`invalid workload ${FILE}:`, `  ${FILE}:2:10  agents.count  expected a number, got string "four"`, `  ${FILE}:3:3  agents.rouns  unknown key "rouns" (did you mean "rounds"?)`].join('\n'),
      );
    }
  });

  it('the result is deeply frozen', () => {
    const w = parseWorkload('conversation:\n  tools:\n    - name: read_file\n', FILE);
    assert.ok(Object.isFrozen(w));
    assert.ok(Object.isFrozen(w.agents));
    assert.ok(Object.isFrozen(w.target.tls));
    assert.ok(Array.isArray(w.conversation.tools) && Object.isFrozen(w.conversation.tools[0]?.parameters));
    assert.throws(() => {
      (w.agents as { count: number }).count = 99;
    }, TypeError);
  });

  it('aliases resolve, and an alias bomb is refused instead of expanding', () => {
    assert.equal(parseWorkload('agents:\n  count: &n 12\n  rounds: *n\n', FILE).agents.rounds, 12);
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      '',
    ].join('\n');
    assert.throws(
      () => parseWorkload(bomb, FILE),
      (error: unknown) => error instanceof WorkloadError && /alias/i.test(error.message),
    );
  });
});

describe('loadWorkload', () => {
  const dirs: string[] = [];
  after(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('reads a file and names the workload after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'roundload-config-'));
    dirs.push(dir);
    const file = join(dir, 'nightly-soak.yaml');
    await writeFile(file, 'agents:\n  count: 16\n');
    const w = await loadWorkload(file);
    assert.equal(w.name, 'nightly-soak');
    assert.equal(w.agents.count, 16);
  });

  it('locates errors using the path it was given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'roundload-config-'));
    dirs.push(dir);
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'agents:\n  count: four\n');
    await assert.rejects(loadWorkload(file), (error: unknown) => error instanceof WorkloadError && error.issues[0]?.where === `${file}:2:10`);
  });

  it('a missing file is a UsageError naming it', async () => {
    await assert.rejects(loadWorkload('/nonexistent/roundload/missing.yaml'), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.match(error.message, /\/nonexistent\/roundload\/missing\.yaml/);
      assert.match(error.message, /no such file/);
      return true;
    });
  });
});

// Usage errors: one line saying what is wrong and where to read more, not the whole help page (which
// scrolled the error off the screen).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/tmp.js';

test('a usage error prints one error line and `see roundload <cmd> --help`, exit 2', async () => {
  const cases: [string[], string, string][] = [
    [['run', 'workloads/smoke.yaml', '--agnets', '3'], "roundload: unknown option '--agnets' (did you mean --agents?)", 'see roundload run --help'],
    [['run'], "roundload: missing required argument 'workload'", 'see roundload run --help'],
    [['compare', 'a', '--min-effect'], "roundload: option '--min-effect <pct>' argument missing", 'see roundload compare --help'],
    [['rn', 'workloads/smoke.yaml'], "roundload: unknown command 'rn' (did you mean run?)", 'see roundload --help'],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(args)));
  results.forEach((res, i) => {
    const [args, error, hint] = cases[i]!;
    assert.equal(res.code, 2, args.join(' '));
    assert.equal(res.stderr, `${error}\n${hint}\n`, args.join(' '));
    assert.equal(res.stdout, '');
  });
});

test('a bad --progress is a usage error naming the flag', async () => {
  const res = await runCli(['run', 'workloads/smoke.yaml', '--progress', '50ms']);
  assert.equal(res.code, 2);
  assert.equal(res.stderr, 'roundload: --progress must be at least 100ms (use --quiet for no progress), got "50ms"\n');
  const junk = await runCli(['run', 'workloads/smoke.yaml', '--progress', 'often']);
  assert.equal(junk.code, 2);
  assert.match(junk.stderr, /^roundload: --progress: invalid duration "often"/);
});

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
    [['shrink', 'x', '--bogus'], "roundload: unknown option '--bogus'", 'see roundload shrink --help'],
    [['history', 'ls', 'x', '--bogus'], "roundload: unknown option '--bogus'", 'see roundload history ls --help'],
    [['trace', 'show', 'x', '--bogus'], "roundload: unknown option '--bogus'", 'see roundload trace show --help'],
    [['repro', 'x', '--bogus'], "roundload: unknown option '--bogus'", 'see roundload repro --help'],
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
  assert.equal(res.stderr, 'roundload: --progress must be at least 0.1 s (use --quiet for no progress), got "50ms"\n');
  const junk = await runCli(['run', 'workloads/smoke.yaml', '--progress', 'often']);
  assert.equal(junk.code, 2);
  assert.match(junk.stderr, /^roundload: --progress must be a duration like 500ms, 30s, 5m, 8h or 1h30m \(a bare number is seconds\), got "often"\n$/);
});

test("a flag's bad value is reported under the flag as typed, the same way for every command, exit 2", async () => {
  const cases: [string[], string][] = [
    [['engine', '--port', 'abc'], 'roundload: --port must be a port number from 0 to 65535 (0 picks a free one), got "abc"'],
    [['run', 'workloads/smoke.yaml', '--metrics-port', '99999'], 'roundload: --metrics-port must be a port number from 0 to 65535 (0 picks a free one), got "99999"'],
    [['run', 'workloads/smoke.yaml', '--agents', '2.5'], 'roundload: --agents must be a whole number ≥ 1, got "2.5"'],
    [['shrink', 'x', '--k', '0'], 'roundload: --k must be a whole number from 1 to 20, got "0"'],
    [['engine', '--topology', 'ring'], 'roundload: --topology must be one of pd, single, got "ring"'],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(args)));
  results.forEach((res, i) => {
    const [args, line] = cases[i]!;
    assert.equal(res.code, 2, args.join(' '));
    assert.equal(res.stderr, `${line}\n`, args.join(' '));
  });
});

test('a flag and a --set on the same field saying different things: exit 2 naming both, nothing run', async () => {
  const res = await runCli(['run', 'workloads/smoke.yaml', '--agents', '3', '--set', 'agents.count=2', '--out', '/nonexistent-roundload-never']);
  assert.equal(res.code, 2);
  assert.match(res.stderr, /--agents\s+agents\.count\s+--agents and --set agents\.count both set agents\.count \(3 and 2\); give one of them/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAbFile } from '../../src/config/index.js';
import { WorkloadError } from '../../src/errors.js';

async function problems(text: string, files: Record<string, string> = {}): Promise<string[]> {
  try {
    await parseAbFile(text, '/x/ab.yaml', (p) => {
      const body = files[p];
      return body === undefined ? Promise.reject(new Error('no such file')) : Promise.resolve(body);
    });
  } catch (error) {
    assert.ok(error instanceof WorkloadError, String(error));
    assert.match(error.message, /^invalid ab file \/x\/ab\.yaml:/);
    return error.issues.map((i) => `${i.where.replace('/x/', '')}  ${i.field}  ${i.message}`);
  }
  assert.fail('no error');
}

test('a valid ab file with an inline workload resolves one workload per arm, with its set and arm label', async () => {
  const plan = await parseAbFile(
    'workload:\n  agents: {count: 3}\narms:\n  - name: A\n  - name: B\n    labels: {ctas: "512"}\n    set: [engine.decode_speedup=1.128]\n    setup: echo hi\n',
    '/x/ab-demo.yaml',
  );
  // No repeats: the stopping rule decides, at ±3% (±1 point for rates) and at most 10 pairs.
  assert.equal(plan.repeats, 10);
  assert.deepEqual(plan.until, { minEffectPct: 3, minEffectPoints: 1, maxPairs: 10, maxTimeMs: null, waitFor: ['decode', 'ttft', 'itl', 'e2e', 'errors'] });
  assert.deepEqual(
    plan.arms.map((a) => [a.name, a.workload.engine.decode_speedup, a.workload.labels]),
    [
      ['A', 1, { arm: 'A' }],
      ['B', 1.128, { ctas: '512', arm: 'B' }],
    ],
  );
  assert.equal(plan.arms[0]!.workload.agents.count, 3);
  assert.equal(plan.arms[0]!.workload.name, 'ab-demo', 'an inline workload is named after the ab file');
  assert.equal(plan.arms[1]!.setup, 'echo hi');
});

test('a base workload file is read relative to the ab file, and its own problems are located in it', async () => {
  const plan = await parseAbFile('workload: base.yaml\narms: [{name: A}, {name: B}]\n', '/x/ab.yaml', (p) => {
    assert.equal(p, '/x/base.yaml');
    return Promise.resolve('name: base\nagents: {count: 5}\n');
  });
  assert.equal(plan.workloadFile, '/x/base.yaml');
  assert.equal(plan.arms[1]!.workload.agents.count, 5);
  await assert.rejects(
    parseAbFile('workload: base.yaml\narms: [{name: A}, {name: B}]\n', '/x/ab.yaml', () => Promise.resolve('agents:\n  count: many\n')),
    (e: unknown) => e instanceof WorkloadError && e.issues.length === 1 && e.issues[0]!.where === '/x/base.yaml:2:10',
  );
});

test('ab file mistakes are located: unknown key with a suggestion, one arm, duplicate names, a bad health URL', async () => {
  assert.deepEqual(await problems('workload: {}\nrepeat: 3\narms:\n  - name: A\n'), [
    'ab.yaml:2:1  repeat  unknown key "repeat" (did you mean "repeats"?)',
    'ab.yaml:3:1  arms  must have at least 2 items, got a list',
  ]);
  assert.deepEqual(await problems('workload: {}\narms:\n  - name: A\n  - name: A\n    health: {url: "ftp://h"}\n'), [
    'ab.yaml:4:11  arms.1.name  arm name "A" is used twice',
    'ab.yaml:5:19  arms.1.health.url  must be an http:// or https:// URL, got string "ftp://h"',
  ]);
});

test('a wrong set entry is reported at that entry of that arm; an inline workload problem at its line', async () => {
  const text = 'workload:\n  agents:\n    cuont: 4\narms:\n  - name: A\n  - name: B\n    set:\n      - engine.decode_speedup=-1\n';
  const found = await problems(text);
  assert.deepEqual(found, [
    'ab.yaml:3:5  workload.agents.cuont  unknown key "cuont" (did you mean "count"?)',
    'ab.yaml:8:9  workload.engine.decode_speedup  must be greater than 0, got number -1 (arms.1.set.0)',
  ]);
});

test('an unreadable base workload file is located at the workload key', async () => {
  assert.deepEqual(await problems('arms: [{name: A}, {name: B}]\nworkload: nope.yaml\n'), ['ab.yaml:2:11  workload  cannot read the workload file /x/nope.yaml: no such file']);
});

test('workloads/ab-target-ctas.yaml is a valid ab file: two arms at 64 and 96 agents, B 12.8% faster on the embedded engine', async () => {
  const { loadAbFile } = await import('../../src/config/index.js');
  const plan = await loadAbFile('workloads/ab-target-ctas.yaml');
  assert.deepEqual(
    plan.arms.map((a) => a.name),
    ['reverted', 'ctas512'],
  );
  assert.deepEqual(plan.arms[0]!.workload.sweep?.agents, [64, 96]);
  assert.deepEqual(
    plan.arms.map((a) => a.workload.engine.decode_speedup),
    [1, 1.128],
  );
  assert.equal(plan.arms[0]!.workload.target.url, null, 'runnable out of the box on embedded engines');
  assert.equal(plan.repeats, 10);
  assert.deepEqual(plan.until?.waitFor, ['decode', 'errors']);
});

test('repeats runs exactly that many pairs, judged once with the margins; the stopping rule keys beside it are refused, located', async () => {
  const plan = await parseAbFile('workload:\n  agents: {count: 3}\nrepeats: 4\nuntil: {min_effect_pct: 5, min_effect_points: 2}\narms:\n  - name: A\n  - name: B\n', '/x/ab.yaml');
  assert.equal(plan.repeats, 4);
  assert.equal(plan.until, null);
  assert.deepEqual([plan.minEffectPct, plan.minEffectPoints], [5, 2]);
  assert.deepEqual(await problems('workload:\n  agents: {count: 3}\nrepeats: 4\nuntil: {max_pairs: 6}\narms:\n  - name: A\n  - name: B\n'), [
    'ab.yaml:4:20  until.max_pairs  repeats runs exactly 4 pairs; max_pairs belong to the stopping rule: drop them, or drop repeats to let the rule decide',
  ]);
});

test('a stopping rule with three arms is accepted: each arm is judged against the first', async () => {
  const plan = await parseAbFile('workload:\n  agents: {count: 3}\nuntil: {max_pairs: 5}\narms:\n  - name: A\n  - name: B\n  - name: C\n', '/x/ab.yaml');
  assert.equal(plan.arms.length, 3);
  assert.equal(plan.until?.maxPairs, 5);
});

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
  assert.equal(plan.repeats, 2);
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
  assert.equal(plan.repeats, 2);
});

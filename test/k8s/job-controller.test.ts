// The manifests' meaning, not only their schema: the Job controller's decision (test/k8s/job-controller.ts) for
// every way a shard or a nightly pod can end. A shard that ended, whatever its exit code, never runs again (a
// rerun finds its results folder used and exits 2, or, after midnight, runs a whole extra shard), and one
// shard's end never terminates the shards still running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { IJobSpec } from 'kubernetes-models/batch/v1/JobSpec';
import { JobState, type PodEnd } from './job-controller.js';
import { ROOT } from '../helpers/root.js';

/** Every way a pod of roundload can end: its exit codes (docs/soak.md), a kill, and an eviction. */
const ENDINGS: Record<string, (container: string) => PodEnd> = {
  'exit 0 (passed)': (c) => ({ exitCodes: { [c]: 0 } }),
  'exit 1 (thresholds failed: a complete result)': (c) => ({ exitCodes: { [c]: 1 } }),
  'exit 2 (usage, or its results folder already used)': (c) => ({ exitCodes: { [c]: 2 } }),
  'exit 3 (target unreachable at start)': (c) => ({ exitCodes: { [c]: 3 } }),
  'exit 4 (results disk refused)': (c) => ({ exitCodes: { [c]: 4 } }),
  'exit 130 (SIGTERM: results written)': (c) => ({ exitCodes: { [c]: 130 } }),
  'exit 137 (OOM-killed)': (c) => ({ exitCodes: { [c]: 137 } }),
  'evicted (DisruptionTarget, exit 130)': (c) => ({ exitCodes: { [c]: 130 }, conditions: ['DisruptionTarget'] }),
};

function jobs(file: string): { name: string; spec: IJobSpec; container: string }[] {
  return parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))
    .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: IJobSpec & { jobTemplate?: { spec: IJobSpec } } })
    .flatMap((doc) => {
      const spec = doc.kind === 'CronJob' ? doc.spec.jobTemplate?.spec : doc.kind === 'Job' ? doc.spec : undefined;
      return spec === undefined ? [] : [{ name: `${file} ${doc.kind} ${doc.metadata.name}`, spec, container: spec.template.spec!.containers[0]!.name }];
    });
}

const SHARDS = jobs('docs/k8s-soak-job.yaml')[0]!;

test('the shard Job: a shard that ended, whatever its exit code, never runs again, and the other shards go on', () => {
  assert.equal(SHARDS.spec.completionMode, 'Indexed');
  for (const [how, end] of Object.entries(ENDINGS)) {
    const job = new JobState(SHARDS.spec);
    // Every shard but the last ends this way in turn while the last one still runs.
    for (let index = 0; index < (SHARDS.spec.completions ?? 1) - 1; index++) {
      const decision = job.podEnded(index, end(SHARDS.container));
      assert.notEqual(decision.kind, 'replacement', `shard ${index} ${how}: ${JSON.stringify(decision)} — it would run again`);
      assert.notEqual(decision.kind, 'job_failed', `shard ${index} ${how}: ${JSON.stringify(decision)} — the running shards would be terminated`);
    }
  }
});

test('every Job of the docs: no pod that ended is replaced by a rerun', () => {
  const all = [...jobs('docs/k8s-soak-job.yaml'), ...jobs('docs/k8s/nightly-history-cronjob.yaml')];
  assert.equal(all.length, 3, all.map((j) => j.name).join(', '));
  for (const { name, spec, container } of all) {
    for (const [how, end] of Object.entries(ENDINGS)) {
      const decision = new JobState(spec).podEnded(0, end(container));
      assert.notEqual(decision.kind, 'replacement', `${name}, ${how}: ${JSON.stringify(decision)}`);
    }
  }
});

test('exit 1 stays final even if backoffLimitPerIndex is raised to retry crashes (the FailIndex rule holds it)', () => {
  const job = new JobState({ ...SHARDS.spec, backoffLimitPerIndex: 1 });
  assert.equal(job.podEnded(0, ENDINGS['exit 1 (thresholds failed: a complete result)']!(SHARDS.container)).kind, 'index_failed');
  assert.equal(job.podEnded(1, ENDINGS['exit 137 (OOM-killed)']!(SHARDS.container)).kind, 'replacement');
});

test('the model is not a rubber stamp: the former shard Job (Ignore on exit 1, backoffLimit 0) reruns a finished shard and kills the others on a crash', () => {
  const { backoffLimitPerIndex: _perIndex, ...rest } = SHARDS.spec;
  const former: IJobSpec = {
    ...rest,
    backoffLimit: 0,
    podFailurePolicy: { rules: [{ action: 'Ignore', onExitCodes: { containerName: SHARDS.container, operator: 'In', values: [1] } }] },
  };
  assert.deepEqual(new JobState(former).podEnded(0, { exitCodes: { [SHARDS.container]: 1 } }), { kind: 'replacement', rule: 'Ignore rule' });
  assert.equal(new JobState(former).podEnded(0, { exitCodes: { [SHARDS.container]: 137 } }).kind, 'job_failed');
});

test("the model follows the Kubernetes documentation's examples", () => {
  const template = { spec: { restartPolicy: 'Never' as const, containers: [{ name: 'main' }] } };
  // Pod failure policy: exit 42 fails the Job; a disruption is ignored (a replacement pod); anything else counts.
  const policy = new JobState({
    completions: 12,
    backoffLimit: 6,
    template,
    podFailurePolicy: {
      rules: [
        { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
        { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      ],
    },
  });
  assert.equal(policy.podEnded(0, { exitCodes: { main: 42 } }).kind, 'job_failed');
  assert.equal(policy.podEnded(0, { exitCodes: { main: 137 }, conditions: ['DisruptionTarget'] }).kind, 'replacement');
  for (let i = 0; i < 6; i++) assert.equal(policy.podEnded(0, { exitCodes: { main: 1 } }).kind, 'replacement');
  assert.equal(policy.podEnded(0, { exitCodes: { main: 1 } }).kind, 'job_failed', 'the 7th counted failure passes backoffLimit 6');
  // Backoff limit per index with FailIndex: index 0's exit 1 is retried once, index 1's exit 42 fails it at once.
  const perIndex = new JobState({
    completions: 4,
    completionMode: 'Indexed',
    backoffLimitPerIndex: 1,
    backoffLimit: 6,
    template,
    podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }] },
  });
  assert.equal(perIndex.podEnded(0, { exitCodes: { main: 1 } }).kind, 'replacement');
  assert.equal(perIndex.podEnded(0, { exitCodes: { main: 1 } }).kind, 'index_failed');
  assert.equal(perIndex.podEnded(1, { exitCodes: { main: 42 } }).kind, 'index_failed');
  assert.equal(perIndex.podEnded(2, { exitCodes: { main: 0 } }).kind, 'index_succeeded');
  // maxFailedIndexes: past it the whole Job fails.
  const capped = new JobState({ completions: 10, completionMode: 'Indexed', backoffLimitPerIndex: 0, maxFailedIndexes: 1, template });
  assert.equal(capped.podEnded(0, { exitCodes: { main: 1 } }).kind, 'index_failed');
  assert.equal(capped.podEnded(2, { exitCodes: { main: 1 } }).kind, 'job_failed');
  assert.throws(() => new JobState({ template, podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [1] } }] } }), /backoffLimitPerIndex/);
});

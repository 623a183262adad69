// Every Kubernetes manifest in docs/ is valid against the Kubernetes API schema (kubernetes-models: the
// OpenAPI schemas of the API, one model per kind), so a user's `kubectl apply` does not fail on a typo'd type
// or a missing required field. Unknown keys are not in those schemas' reach (they allow extra properties):
// the containers' scripts are tested by running them (test/e2e/nightly-shards.test.ts, test/history/k8s.test.ts),
// and what the Job controller does with each way a pod ends by test/k8s/job-controller.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { ROOT } from '../helpers/root.js';

const FILES = ['docs/k8s-soak-job.yaml', ...readdirSync(join(ROOT, 'docs/k8s')).map((f) => `docs/k8s/${f}`)].filter((f) => f.endsWith('.yaml'));

const MODELS: Record<string, (doc: unknown) => { validate(): void }> = {
  'batch/v1 Job': (doc) => new Job(doc as ConstructorParameters<typeof Job>[0]),
  'batch/v1 CronJob': (doc) => new CronJob(doc as ConstructorParameters<typeof CronJob>[0]),
  'v1 PersistentVolumeClaim': (doc) => new PersistentVolumeClaim(doc as ConstructorParameters<typeof PersistentVolumeClaim>[0]),
};

for (const file of FILES) {
  test(`${file}: every document validates against the Kubernetes schema of its kind`, () => {
    const docs = parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map((d) => d.toJS() as { apiVersion: string; kind: string });
    assert.ok(docs.length > 0);
    for (const doc of docs) {
      const model = MODELS[`${doc.apiVersion} ${doc.kind}`];
      assert.ok(model !== undefined, `${file}: no schema model for ${doc.apiVersion} ${doc.kind}`);
      assert.doesNotThrow(() => model(doc).validate(), `${file}: ${doc.kind}`);
    }
  });
}

test('the validation is not a rubber stamp: a wrong type and a missing required field are refused', () => {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'docs/k8s-soak-job.yaml'), 'utf8')).map(
    (d) => d.toJS() as { spec: Record<string, unknown> & { template: { spec: { containers: Record<string, unknown>[] } } } },
  );
  const shards = structuredClone(docs[0]!);
  shards.spec.completions = 'four';
  assert.throws(() => new Job(shards as never).validate(), /completions must be integer/);
  const nameless = structuredClone(docs[0]!);
  delete nameless.spec.template.spec.containers[0]!.name;
  assert.throws(() => new Job(nameless as never).validate(), /name/);
});

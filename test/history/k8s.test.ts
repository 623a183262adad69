// The documented nightly CronJob: the run appends to a history on the volume, trend judges it afterwards, and
// the shell forwards SIGTERM to the run (it is PID 1 and runs two commands, so it cannot exec).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { tempDir } from '../helpers/tmp.js';
import { ROOT } from '../helpers/root.js';

interface Doc {
  kind: string;
  spec: Record<string, unknown> & {
    jobTemplate?: { spec: { template: { spec: { containers: { command: string[]; args: string[]; volumeMounts: { mountPath: string }[] }[] } } } };
  };
}

const FILE = join(ROOT, 'docs/k8s/nightly-history-cronjob.yaml');

function cronJob(): Doc {
  const docs = parseAllDocuments(readFileSync(FILE, 'utf8')).map((d) => d.toJS() as Doc);
  assert.deepEqual(
    docs.map((d) => d.kind),
    ['CronJob', 'PersistentVolumeClaim'],
  );
  return docs[0]!;
}

test('the CronJob runs with --history on the mounted volume, then trend --fail-on regression; one pod at a time, no npx', () => {
  const job = cronJob();
  assert.equal(job.spec.concurrencyPolicy, 'Forbid');
  const container = job.spec.jobTemplate!.spec.template.spec.containers[0]!;
  const script = container.args.join('\n');
  assert.deepEqual(container.command, ['/bin/sh', '-c']);
  assert.deepEqual(
    container.volumeMounts.map((m) => m.mountPath),
    ['/history'],
  );
  assert.match(script, /node dist\/src\/cli\.js run .*\\\n(.*\\\n)*\s*--history \/history\/nightly\.db/);
  assert.match(script, /node dist\/src\/cli\.js trend \/history\/nightly\.db --fail-on regression/);
  assert.doesNotMatch(script, /npx/);
});

test("the CronJob's script forwards SIGTERM to the run, still runs trend, and exits with the run's code (130)", async (t) => {
  // The script as written, with `node … run …` standing in as a process that exits 130 on SIGTERM and
  // `node … trend …` as one that leaves a mark and exits 0.
  const mark = join(tempDir(t), 'trend-ran');
  const script = cronJob()
    .spec.jobTemplate!.spec.template.spec.containers[0]!.args.join('\n')
    .replace(/node dist\/src\/cli\.js run [^&]*&/s, `node -e "process.on('SIGTERM', () => process.exit(130)); setInterval(() => {}, 1000)" &`)
    .replace(/node dist\/src\/cli\.js trend [^\n]*\\\n[^\n]*\n/, `touch ${mark}\n`);
  const child = spawn('/bin/sh', ['-c', script], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  child.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 130);
  assert.ok(existsSync(mark), 'trend ran after the interrupted run');
});

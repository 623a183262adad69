// The sharded nightly of docs/k8s-soak-job.yaml as the pods run it (issue 25 item 4): the shards' and the
// merge's shell scripts taken from the manifest as written, Kubernetes' own substitutions made
// ($(JOB_COMPLETION_INDEX), the volume's path), `node dist/src/cli.js` run from source; two shard processes at
// once against one engine process, each scraped-able and pushing its series to a remote-write receiver, then
// the merge: one night in the history database with both shards' requests, a trend judged, exit 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { spawnEngine } from '../helpers/procs.js';
import { tempDir } from '../helpers/tmp.js';
import { cliCommand, ROOT } from '../helpers/root.js';

const CLI = cliCommand();

interface Container {
  env?: { name: string; value: string }[];
  args: string[];
}

function containers(): { shard: Container; merge: Container } {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'docs/k8s-soak-job.yaml'), 'utf8')).map((d) => d.toJS() as { spec: { template: { spec: { containers: Container[] } } } });
  return { shard: docs[0]!.spec.template.spec.containers[0]!, merge: docs[1]!.spec.template.spec.containers[0]! };
}

/** A container's script with what Kubernetes and the image would provide, on this machine. */
function script(c: Container, results: string, workload: string, index?: number): string {
  let text = c.args.join('\n').replaceAll('node dist/src/cli.js', CLI).replaceAll('/results', results).replace('workloads/nightly-soak.yaml', workload);
  // Kubernetes expands $(VAR) in args before the shell sees them; the metrics port is any free one here.
  if (index !== undefined) text = text.replaceAll('$(JOB_COMPLETION_INDEX)', String(index)).replace('--metrics-port 9464', '--metrics-port 0');
  return text;
}

function sh(text: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', text], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('two shard pods and the merge pod of the documented Job: one night in the history with both shards, series pushed, exit 0', async (t) => {
  const dir = tempDir(t);
  const engine = await spawnEngine(t, { topology: 'single', decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 16 });
  // A remote-write receiver: counts the pushes (their bodies are tested against a real Prometheus elsewhere).
  const pushes: string[] = [];
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      pushes.push(`${req.method} ${req.url} ${req.headers['content-encoding']}`);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.after(() => receiver.close());
  const pushUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/v1/write`;
  const workload = join(dir, 'nightly.yaml');
  writeFileSync(workload, 'name: nightly\nagents: {count: 4, rounds: 3, think_time_ms: 0}\nconversation: {tools: none, max_tokens: 16}\n');
  const { shard, merge } = containers();
  const env = { N: '2', RUN_ID: 'night-1', ROUTER_URL: engine.url, PROM_REMOTE_WRITE: pushUrl, HOSTNAME: 'pod' };
  const shards = await Promise.all([0, 1].map((i) => sh(script(shard, dir, workload, i), { ...env, HOSTNAME: `pod-${i}` }, 60_000)));
  shards.forEach((s, i) => assert.equal(s.code, 0, `shard ${i}: ${s.stderr}`));
  assert.equal(pushes.length >= 2 && pushes.every((p) => p === 'POST /api/v1/write snappy'), true, pushes.join('\n'));
  const merged = await sh(script(merge, dir, workload), env, 60_000);
  assert.equal(merged.code, 0, merged.stderr);
  assert.match(merged.stderr, /history: run \w+ added to .*nightly\.db/);
  assert.ok(existsSync(join(dir, 'night-1', 'trend.html')));
  // The history holds the night once, with both shards' requests (4 agents × 3 rounds).
  const ls = await sh(`${CLI} history ls ${join(dir, 'nightly.db')} --json`, {}, 30_000);
  assert.equal(ls.code, 0, ls.stderr);
  const runs = JSON.parse(ls.stdout) as Record<string, unknown>[];
  assert.equal(runs.length, 1, ls.stdout);
  const summary = JSON.parse(readFileSync(join(dir, 'night-1', 'merged', 'summary.json'), 'utf8')) as { totals: { requests: number } };
  assert.equal(summary.totals.requests, 12);
  assert.equal(runs[0]!['requests'], 12, ls.stdout);
});

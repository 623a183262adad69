import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { uncompress } from 'snappyjs';
import type { RequestRecord } from '../../src/types/index.js';
import { ROOT } from '../helpers/root.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const BUNDLE = join(ROOT, 'dist/bin/cli.js');

test('the shipped bundle (dist/bin, what the bin and npm start run) completes a run through the hop, with its engine thread, writer thread, metrics export and remote write', async (t) => {
  // Built here, from the sources under test: the bundle's entries find each other by their file names and its
  // lazily loaded packages must keep their exports, which only a run through the bundle itself proves.
  await run(process.execPath, [join(ROOT, 'scripts/bundle.mjs')], { cwd: ROOT, timeout: 120_000 });
  const version = await run(process.execPath, [BUNDLE, '--version'], { cwd: ROOT, timeout: 60_000 });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(version.stdout.trim(), pkg.version);

  // A remote-write receiver: each push a snappy-compressed body (snappyjs, loaded by import() in the bundle).
  const pushes: Buffer[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers['content-encoding'] === 'snappy') pushes.push(Buffer.concat(chunks));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => receiver.close());
  const writeUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/v1/write`;

  const dir = tempDir(t);
  const workload = join(dir, 'two.yaml');
  // No target URL: the embedded engine in its thread (dist/bin/thread-entry.js), reached through the built-in hop
  // (its certificates: selfsigned); results through the writer thread; --metrics-port: prom-client.
  writeFileSync(workload, 'name: two\ntarget: {via: {kind: hop}}\nagents: {count: 1, rounds: 2, think_time_ms: 0}\nconversation: {tools: none, max_tokens: 8}\n');
  const out = join(dir, 'run');
  const args = [BUNDLE, 'run', workload, '--quiet', '--out', out, '--metrics-port', '0', '--remote-write', writeUrl];
  const result = await run(process.execPath, args, { cwd: ROOT, timeout: 120_000 });
  assert.match(result.stdout + result.stderr, /PASS/);
  for (const f of ['run.json', 'requests.jsonl', 'summary.json', 'report.html', 'junit.xml']) assert.ok(existsSync(join(out, f)), `${f} written`);
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.deepEqual(
    records.map((r) => [r.round, r.status, r.path]),
    [
      [1, 'ok', 'hop'],
      [2, 'ok', 'hop'],
    ],
  );
  assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /uPlot/, 'the report inlines uPlot, read from node_modules');
  assert.ok(pushes.length >= 1, 'remote write pushed at least once');
  assert.ok(uncompress(new Uint8Array(pushes.at(-1)!)).length > 0, 'a push is a snappy-compressed body');
});

test("every package src/ loads with import() stays outside the bundle (esbuild's chunks give CommonJS modules a default export only)", () => {
  const script = readFileSync(join(ROOT, 'scripts/bundle.mjs'), 'utf8');
  const list = /const EXTERNAL = \[([^\]]*)\]/.exec(script);
  assert.ok(list !== null, 'scripts/bundle.mjs declares EXTERNAL');
  const external = new Set([...list[1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!));
  const dynamic = new Set<string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts')) for (const m of readFileSync(path, 'utf8').matchAll(/\bimport\('([^.'][^']*)'\)/g)) dynamic.add(m[1]!);
    }
  };
  walk(join(ROOT, 'src'));
  assert.ok(dynamic.has('selfsigned'), 'the scan finds the import() calls');
  for (const name of dynamic) assert.ok(external.has(name), `src/ loads ${name} with import(): add it to EXTERNAL in scripts/bundle.mjs`);
});

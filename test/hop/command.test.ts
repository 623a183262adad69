// `roundload hop` standalone and `roundload run --via`, as a user runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request, Agent } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEngine } from '../../src/engine/index.js';
import { engineSchema } from '../../src/config/schema.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import { cliArgs, ROOT } from '../helpers/root.js';

function get(url: string, ca: string, agent: Agent, timeoutMs: number): Promise<number | 'timeout'> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/models`, { ca, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', reject);
    req.end();
  });
}

test('`roundload hop` prints its URL and CA file, serves over TLS with keep-alive, applies --fault, and closes on SIGINT', async (t) => {
  const engine = await startEngine({ settings: engineSchema.parse({}) });
  t.after(() => engine.close());
  const child = spawn(process.execPath, [...cliArgs('hop'), '--listen', '127.0.0.1:0', '--upstream', engine.url, '--fault', 'stall:after_requests=1'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
  t.after(() => {
    clearTimeout(kill);
    child.kill('SIGKILL');
  });
  // The start-up lines arrive in separate writes: wait for the last of them (the faults line), bounded.
  for (let i = 0; i < 300 && !(/listening on https:\/\/127\.0\.0\.1:\d+/.test(stderr) && /faults: /.test(stderr) && stdout.includes('\n')); i += 1) await new Promise((r) => setTimeout(r, 50));
  const url = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1];
  assert.ok(url !== undefined, stderr);
  assert.match(stderr, /faults: stall:after_requests=1/);
  const caFile = stdout.trim().split('\n')[0]!;
  assert.match(stderr, new RegExp(`CA certificate .*${caFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const ca = readFileSync(caFile, 'utf8');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  assert.equal(await get(url, ca, agent, 5000), 200, 'the first request on the connection is answered');
  assert.equal(await get(url, ca, agent, 800), 'timeout', 'the second, on the reused connection, never is');
  child.kill('SIGINT');
  assert.equal(await exited, 0);
  assert.match(stderr, /served 2 requests on 1 connections; faults acted: stall 1/);
});

test('`roundload hop` with a bad --fault or --listen exits 2 with a clear message', async () => {
  const bad = await runCli(['hop', '--upstream', 'http://127.0.0.1:9', '--fault', 'stal:after_requests=1'], { timeoutMs: 20_000 });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--fault stal:after_requests=1: kind: must be one of stall, cut/);
  const listen = await runCli(['hop', '--upstream', 'http://127.0.0.1:9', '--listen', 'localhost'], { timeoutMs: 20_000 });
  assert.equal(listen.code, 2);
  assert.match(listen.stderr, /--listen must be host:port/);
});

test('`roundload run --via hop` sends every request through the built-in hop', async (t) => {
  const out = join(tempDir(t), 'r');
  const res = await runCli(['run', 'workloads/smoke.yaml', '--via', 'hop', '--agents', '2', '--rounds', '2', '--out', out], { timeoutMs: 60_000 });
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stderr, /path: through the built-in hop https:\/\/127\.0\.0\.1:\d+ to http:\/\/127\.0\.0\.1:\d+/);
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.equal(records.length, 4);
  assert.ok(records.every((r) => r.status === 'ok' && r.path === 'hop' && r.connection?.tls !== null));
});

test('hop --listen on a host beyond loopback is refused (exit 2) unless --listen-expose says so', async () => {
  const { hopCommand } = await import('../../src/commands/hop.js');
  const { ServerStartError, UsageError } = await import('../../src/errors.js');
  for (const listen of ['0.0.0.0:0', '[::]:0', '192.0.2.1:0']) {
    await assert.rejects(hopCommand({ upstream: 'http://127.0.0.1:1', listen, fault: [] }), (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, /beyond this machine.*no authentication.*--listen-expose/);
      return true;
    });
  }
  // With the flag the address is taken as asked: 192.0.2.1 (TEST-NET) is no address of this machine, so the
  // listen itself fails — past the check, without opening a port to the network in a test.
  await assert.rejects(hopCommand({ upstream: 'http://127.0.0.1:1', listen: '192.0.2.1:0', fault: [], listenExpose: true }), ServerStartError);
});

// src/transport/undici.ts loads undici's dispatchers from their own files instead of the index (which also
// loads fetch, WebSocket, cookies, caches and mocks): they must be the very classes the index exports, with the
// request API, and a module of the transport must not pull the index in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sourceModule, COMPILED } from '../helpers/root.js';

const parts = sourceModule(new URL('../../src/transport/undici.ts', import.meta.url));

test("the transport's undici parts load without undici's index and without fetch, WebSocket or the mocks", () => {
  const modules = ['paths', 'get', 'timing', 'send'].map((m) => sourceModule(new URL(`../../src/transport/${m}.ts`, import.meta.url)));
  const code = `import { createRequire } from 'node:module';
for (const m of ${JSON.stringify(modules)}) await import(m);
console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/undici/'))));`;
  const out = execFileSync(process.execPath, [...(COMPILED ? [] : ['--import', 'tsx']), '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30_000 });
  const loaded = JSON.parse(out) as string[];
  assert.ok(
    loaded.some((k) => k.endsWith('/undici/lib/dispatcher/client.js')),
    'the client is loaded',
  );
  for (const unwanted of ['/undici/index.js', '/lib/web/fetch/', '/lib/web/websocket/', '/lib/web/cookies/', '/lib/mock/'])
    assert.ok(!loaded.some((k) => k.includes(unwanted)), `${unwanted} is not loaded: ${loaded.filter((k) => k.includes(unwanted)).join(', ')}`);
});

test("they are the classes undici's index exports, and a dispatcher has the request API", async () => {
  const ours = (await import(parts)) as typeof import('../../src/transport/undici.js');
  const undici = await import('undici');
  assert.equal(ours.Agent, undici.Agent);
  assert.equal(ours.Client, undici.Client);
  assert.equal(ours.Pool, undici.Pool);
  assert.equal(ours.ProxyAgent, undici.ProxyAgent);
  assert.equal(ours.buildConnector, undici.buildConnector);
  const server = createServer((_, res) => res.end('pong'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = new ours.Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const res = await client.request({ path: '/', method: 'GET', headersTimeout: 5000, bodyTimeout: 5000 });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), 'pong');
  } finally {
    await client.close();
    await new Promise((r) => server.close(r));
  }
});

/** How a child that makes `requests` requests of 1 KB answers through `module`'s Client compiled the largest
 * WebAssembly function it ran, llhttp's state machine: `Liftoff` (the baseline compiler) or `Liftoff TurboFan`
 * (then the optimizing one). V8 traces each compile (`--wasm-num-compilation-tasks=0`: on the main thread, so
 * every one started is done, and traced, before the process exits). */
function parserCompiles(module: string, requests: number): string {
  const code = `import { createServer } from 'node:http';
const { Client } = await import(${JSON.stringify(module)});
const server = createServer((_, res) => res.end('x'.repeat(1000)));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const client = new Client('http://127.0.0.1:' + server.address().port);
for (let i = 0; i < ${requests}; i += 1) await (await client.request({ path: '/', method: 'GET' })).body.text();
await client.close();
server.close();`;
  const flags = ['--wasm-num-compilation-tasks=0', '--trace-wasm-compilation-times'];
  const out = execFileSync(process.execPath, [...flags, ...(COMPILED ? [] : ['--import', 'tsx']), '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 });
  // "Compiled function 0x…#20 using Liftoff, took 4 ms and … bytes; bodysize 33670 codesize 108864"
  const compiles = [...out.matchAll(/^Compiled function (\S+) using (\w+),.*bodysize (\d+)/gm)].map(([, fn, tier, size]) => ({ fn, tier, size: Number(size) }));
  const largest = compiles.reduce((a, b) => (b.size > a.size ? b : a), { fn: '', tier: '', size: 0 });
  return compiles
    .filter((c) => c.fn === largest.fn)
    .map((c) => c.tier)
    .join(' ');
}

test("undici's HTTP parser is not recompiled by V8's optimizing compiler over a short run's first answers (it is with V8's default budget)", () => {
  assert.equal(parserCompiles(parts, 20), 'Liftoff');
  assert.equal(parserCompiles('undici', 1), 'Liftoff TurboFan', 'with the default budget, one answer is enough (the test can fail)');
});

test("a long run's parser is still recompiled by the optimizing compiler, after some hundred answers", () => {
  assert.equal(parserCompiles(parts, 3000), 'Liftoff TurboFan');
});

test("V8's flags are as they were once the parser is made: Node's own modules loaded while the first connection is made, or after, still use their code caches", () => {
  // V8 accepts a code cache only under the flags it was made with: Node's built-in modules' caches too
  // (NODE_DEBUG_NATIVE=CODE_CACHE says, for each one compiled, whether its cache was accepted or rejected).
  const code = `import v8 from 'node:v8';
import diagnostics from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
const { Client } = await import(${JSON.stringify(parts)});
const server = createServer((_, res) => res.end('pong'));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const client = new Client('http://127.0.0.1:' + server.address().port);
// While the connection is made: after undici's beforeConnect, before its socket connects.
diagnostics.subscribe('undici:client:beforeConnect', () => createRequire(import.meta.url)('node:zlib'));
await (await client.request({ path: '/', method: 'GET' })).body.text();
await client.close();
server.close();
await import('node:dgram');
v8.setFlagsFromString('--wasm-tiering-budget=1234');
await import('node:readline');`;
  const child = spawnSync(process.execPath, [...(COMPILED ? [] : ['--import', 'tsx']), '--input-type=module', '-e', code], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' },
  });
  assert.equal(child.status, 0, child.stderr.slice(-2000));
  const verdicts = new Map([...child.stderr.matchAll(/Code cache of (\S+) \(\w+\) is (accepted|rejected)/g)].map(([, id, said]) => [id, said]));
  assert.equal(verdicts.get('zlib'), 'accepted', 'loaded while the first connection is made');
  assert.equal(verdicts.get('dgram'), 'accepted', 'loaded after it');
  assert.equal(verdicts.get('readline'), 'rejected', 'loaded with the flag changed (the test can fail)');
});

// `roundload record`, `roundload trace` and `roundload run --replay` as a user runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startEngine } from '../../src/engine/index.js';
import { engineSchema } from '../../src/config/schema.js';
import { readTrace } from '../../src/trace/index.js';
import { runCli, tempDir } from '../helpers/tmp.js';
import { chatBurst, modelsStatus } from '../helpers/chat-burst.js';
import { fakeChat, okAnswer } from '../helpers/fake-chat.js';
import { cliArgs, ROOT } from '../helpers/root.js';

/** `roundload record` as a child process, its URL once it listens. */
async function spawnRecorder(t: import('node:test').TestContext, upstream: string, out: string) {
  const child = spawn(process.execPath, [...cliArgs('record'), '--upstream', upstream, '--listen', '127.0.0.1:0', '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
  t.after(() => {
    clearTimeout(kill);
    child.kill('SIGKILL');
  });
  for (let i = 0; i < 400 && !stdout.includes('\n'); i += 1) await new Promise((r) => setTimeout(r, 50));
  const url = stdout.trim();
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, stderr);
  return { child, url, exited, stderr: () => stderr };
}

const chat = (n: number) =>
  JSON.stringify({
    model: 'deepseek-v4-flash',
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 40,
    messages: [{ role: 'user', content: `conversation ${n}: please explain the parser` }],
  });

test('SIGINT closes `roundload record` cleanly with a tally; a SIGKILLed recorder leaves a readable trace of whole lines', async (t) => {
  const engine = await startEngine({ settings: engineSchema.parse({ decode_step_ms: 25, output_tokens_min: 30, output_tokens_max: 40 }) });
  t.after(() => engine.close());
  const dir = tempDir(t);

  const clean = await spawnRecorder(t, engine.url, join(dir, 'clean.jsonl'));
  const res = await request(`${clean.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(1) });
  await res.body.text();
  clean.child.kill('SIGINT');
  assert.deepEqual(await clean.exited, { code: 0, signal: null });
  assert.match(clean.stderr(), /recorded 1 request in 1 conversation on 1 connection \(0 with errors\)/);

  const killed = await spawnRecorder(t, engine.url, join(dir, 'killed.jsonl'));
  for (const n of [1, 2]) {
    const done = await request(`${killed.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(n) });
    await done.body.text();
  }
  // A third request is streaming when the recorder is killed.
  const inFlight = await request(`${killed.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(3) });
  const reading = inFlight.body.text().catch(() => 'cut');
  await new Promise((r) => setTimeout(r, 150));
  killed.child.kill('SIGKILL');
  assert.equal((await killed.exited).signal, 'SIGKILL');
  await reading;
  const text = readFileSync(join(dir, 'killed.jsonl'), 'utf8');
  assert.ok(text.endsWith('\n'), 'every line written whole');
  const trace = readTrace(join(dir, 'killed.jsonl'));
  assert.equal(trace.requests.length, 2, 'the two completed requests; the one in flight had no line yet');
  assert.ok(trace.requests.every((r) => r.response.status === 200 && r.response.error === null && r.response.completion_tokens! >= 30));
  const show = await runCli(['trace', 'show', join(dir, 'killed.jsonl')], { timeoutMs: 30_000 });
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /2 requests in 2 conversations/);
});

test('`roundload run --replay` replays a trace; a broken trace, or one over an existing file, is a usage error (exit 2)', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'run');
  const ok = await runCli(['run', 'workloads/replay-example.yaml', '--out', out, '--set', 'replay.conversations=2', '--quiet'], { timeoutMs: 60_000 });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /replaying workloads\/traces\/replay-example\.jsonl: 2 conversations, 12 requests on 2 connections as recorded/);
  assert.match(ok.stdout, /replay {5}workloads\/traces\/replay-example\.jsonl: 2 of 2 conversations, 12 of 12 requests, as-recorded/);
  assert.match(ok.stdout, /sockets as recorded: 12 of 12 requests/);
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"kind":"header","format":"roundload-trace","version":1}\n{"kind":"request","start_ms":-1}\n{}\n');
  const res = await runCli(['run', 'workloads/smoke.yaml', '--replay', bad, '--out', join(dir, 'x')], { timeoutMs: 30_000 });
  assert.equal(res.code, 2);
  assert.match(res.stderr, /bad\.jsonl:2: start_ms must be a number ≥ 0/);
  const again = await runCli(['record', '--upstream', 'http://127.0.0.1:9', '--out', 'workloads/traces/replay-example.jsonl'], { timeoutMs: 30_000 });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already holds a trace/);
});

test('`roundload record` on a FIFO nobody reads answers all 120 requests, and SIGINT still ends it in bounded time saying how many the trace misses; /dev/full is refused (exit 4)', async (t) => {
  const upstream = await fakeChat(t, (_, res) => okAnswer(res));
  const fifo = join(tempDir(t), 'trace.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  // A reader that never reads: after 64 KiB every write(2) to the pipe blocks, and the writer with it.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.after(() => closeSync(reader));
  const rec = await spawnRecorder(t, upstream.url, fifo);
  assert.equal(await chatBurst(rec.url, 120), 120, 'every request answered in time');
  assert.equal(await modelsStatus(rec.url), 200);
  const stopping = performance.now();
  rec.child.kill('SIGINT');
  assert.deepEqual(await rec.exited, { code: 0, signal: null });
  assert.ok(performance.now() - stopping < 15_000, 'the stalled writer does not hold the exit');
  assert.match(rec.stderr(), /INCOMPLETE trace: \d+ of the 120 chat requests are NOT in it \(\d+ recorded\); recording stopped at \d+\.\d s: the trace volume stalled/);

  const full = await runCli(['record', '--upstream', upstream.url, '--listen', '127.0.0.1:0', '--out', '/dev/full'], { timeoutMs: 30_000 });
  assert.equal(full.code, 4, full.stderr);
  assert.match(full.stderr, /cannot write the trace \/dev\/full: no space left on device \(ENOSPC\)/);
  assert.equal(full.stdout, '', 'no URL: it never listened');
});

test('record --listen on a host beyond loopback is refused (exit 2, no trace) unless --listen-expose says so', async (t) => {
  const { recordCommand } = await import('../../src/commands/record.js');
  const { ServerStartError, UsageError } = await import('../../src/errors.js');
  const dir = tempDir(t);
  // Stopped before it starts: a recorder that did listen closes again at once.
  const stopped = AbortSignal.abort();
  for (const listen of ['0.0.0.0:0', '[::]:0', '192.0.2.1:0']) {
    const out = join(dir, `${listen.replace(/\W/g, '_')}.jsonl`);
    await assert.rejects(recordCommand({ upstream: 'http://127.0.0.1:1', listen, out }, stopped), (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error));
      assert.match(error.message, /beyond this machine.*--listen-expose/);
      return true;
    });
    assert.equal(existsSync(out), false, 'no trace was started');
  }
  // With the flag the address is taken as asked: 192.0.2.1 (TEST-NET) is no address of this machine, so the
  // listen itself fails — past the check, without opening a port to the network in a test.
  await assert.rejects(recordCommand({ upstream: 'http://127.0.0.1:1', listen: '192.0.2.1:0', out: join(dir, 'exposed.jsonl'), listenExpose: true }, stopped), ServerStartError);
});

test("a run that replays a trace's recorded contents (its prompts) is written into an owner-only folder (700); a replay of shapes only is not", async (t) => {
  const { importTrace } = await import('../../src/trace/index.js');
  const dir = tempDir(t);
  const log = join(dir, 'log.jsonl');
  writeFileSync(log, `${JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'the prompt of someone' }] })}\n`);
  importTrace({ format: 'openai', file: log, out: join(dir, 'content.jsonl'), content: true });
  const withContent = await runCli(['run', 'workloads/smoke.yaml', '--replay', join(dir, 'content.jsonl'), '--out', join(dir, 'run'), '--quiet'], { timeoutMs: 60_000 });
  assert.ok(withContent.code === 0 || withContent.code === 1, withContent.stderr);
  assert.equal(statSync(join(dir, 'run')).mode & 0o777, 0o700);
  const shapes = await runCli(['run', 'workloads/replay-example.yaml', '--out', join(dir, 'shapes'), '--set', 'replay.conversations=1', '--quiet'], { timeoutMs: 60_000 });
  assert.ok(shapes.code === 0 || shapes.code === 1, shapes.stderr);
  assert.notEqual(statSync(join(dir, 'shapes')).mode & 0o077, 0, 'the umask decides, as for any run');
});

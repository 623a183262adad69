// The engine's faults on the wire, where clients connect (the PD router, or a single server): which requests
// each selector picks, what each fault sends (or does not), and that engine.close() ends hung responses at once.
// Client-side records are test/e2e/hangs.test.ts's job; the PD faults are test/engine/pd-faults.test.ts's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { engineSchema, parseWorkload, loadEngineFaults } from '../../src/config/index.js';
import { startEngine, type EngineHandle } from '../../src/engine/index.js';
import type { TestContext } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { USER, until } from './helpers.js';
import { tempDir } from '../helpers/tmp.js';
import { LoopDelay } from '../helpers/loop-delay.js';

/** How late this process's event loop ran, over the whole file: upper time bounds widen by it (measured). */
const loop = new LoopDelay();
after(() => loop.stop());

type FaultInput = Record<string, unknown>;

const FAST = { decode_step_ms: 1, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, output_tokens_min: 8, output_tokens_max: 8, reasoning: 'off' };

let topology: 'pd' | 'single' = 'pd';

async function faulty(t: TestContext, faults: FaultInput[], extra: Record<string, unknown> = {}): Promise<EngineHandle> {
  const engine = await startEngine({ settings: engineSchema.parse({ ...FAST, topology, ...extra, faults }) });
  t.after(() => engine.close());
  return engine;
}

/** One keep-alive socket to the engine (a Client with one connection), closed after the test. */
function socket(t: TestContext, engine: EngineHandle): Client {
  const client = new Client(engine.url, { pipelining: 1, keepAliveTimeout: 60_000, bodyTimeout: 0, headersTimeout: 0 });
  t.after(() => client.destroy());
  return client;
}

function body(assistantTurns = 0, stream = true): string {
  const messages: unknown[] = [USER('hello')];
  for (let i = 0; i < assistantTurns; i += 1) messages.push({ role: 'assistant', content: `answer ${i}` }, USER(`more ${i}`));
  return JSON.stringify({ model: 'm', stream, messages, max_tokens: 16 });
}

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Each read with its arrival time. */
  reads: { atMs: number; text: string }[];
  text: string;
  error: Error | null;
}

/** Posts a chat request on `client` and reads the body raw; `stopAfterMs` gives up on a silent body. */
async function post(client: Client, payload: string, stopAfterMs = 3000): Promise<Raw> {
  const res = await client.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: payload });
  const out: Raw = { status: res.statusCode, headers: res.headers, reads: [], text: '', error: null };
  const giveUp = setTimeout(() => res.body.destroy(), stopAfterMs);
  try {
    for await (const piece of res.body) {
      const text = (piece as Buffer).toString('utf8');
      out.reads.push({ atMs: performance.now(), text });
      out.text += text;
    }
  } catch (error) {
    out.error = error as Error;
  } finally {
    clearTimeout(giveUp);
  }
  return out;
}

const dataEvents = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('data:'));

for (const which of ['pd', 'single'] as const) {
  describe(`${which}: wire faults`, () => {
    before(() => {
      topology = which;
    });
    test('after_requests counts requests per connection: the 3rd and later on each socket are hit, a new socket starts over', async (t) => {
      const engine = await faulty(t, [{ kind: 'http_error', status: 503, after_requests: 2 }]);
      const a = socket(t, engine);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await post(a, body(0, false))).status);
      assert.deepEqual(statuses, [200, 200, 503, 503]);
      const b = socket(t, engine);
      assert.equal((await post(b, body(0, false))).status, 200, 'a fresh socket is served');
    });

    test('from_round reads the round from the assistant messages; every and times thin the hits', async (t) => {
      const engine = await faulty(t, [
        { kind: 'http_error', status: 500, from_round: 3 },
        { kind: 'http_error', status: 429, every: 3, times: 2 },
      ]);
      const c = socket(t, engine);
      assert.equal((await post(c, body(1, false))).status, 200, 'round 2: not yet');
      assert.equal((await post(c, body(2, false))).status, 500, 'round 3');
      assert.equal((await post(c, body(5, false))).status, 500, 'round 6');
      const seen: number[] = [];
      for (let i = 0; i < 12; i += 1) seen.push((await post(c, body(0, false))).status);
      // The round-2 request above reached the second fault (the first did not take it): it was its 1st.
      assert.deepEqual(seen, [200, 429, 200, 200, 429, 200, 200, 200, 200, 200, 200, 200], 'every 3rd, twice');
      assert.deepEqual(engine.stats().faultsFired, { http_error: 4 });
    });

    test('ratio is seeded: the same seed hits the same requests, another seed others, about the share asked', async (t) => {
      const pattern = async (seed: number): Promise<string> => {
        const engine = await faulty(t, [{ kind: 'http_error', ratio: 0.5 }], { seed });
        const c = socket(t, engine);
        let out = '';
        for (let i = 0; i < 40; i += 1) out += (await post(c, body(0, false))).status === 500 ? 'x' : '.';
        return out;
      };
      const [a, b, other] = [await pattern(3), await pattern(3), await pattern(4)];
      assert.equal(a, b);
      assert.equal(a, 'xx.x.x.xxx....xx...xxxxx.x..xxxxxx.x.x..', 'seed 3 picks these requests (util Rng draws, pinned: a change of generator changes it knowingly)');
      assert.notEqual(a, other);
      const hits = [...a].filter((ch) => ch === 'x').length;
      assert.ok(hits >= 10 && hits <= 30, `${hits} of 40 hit at ratio 0.5`);
    });

    test("http_error answers SGLang's flat error body, with Retry-After when asked", async (t) => {
      const engine = await faulty(t, [{ kind: 'http_error', status: 429, retry_after_s: 7 }]);
      const res = await post(socket(t, engine), body());
      assert.equal(res.status, 429);
      assert.equal(res.headers['retry-after'], '7');
      assert.deepEqual(JSON.parse(res.text), { object: 'error', message: 'engine fault: rate limited', type: 'TooManyRequestsError', param: null, code: 429 });
    });

    test('stall_mid_stream sends exactly after_chunks data events, then nothing, with the socket open', async (t) => {
      const engine = await faulty(t, [{ kind: 'stall_mid_stream', after_chunks: 3 }]);
      const res = await post(socket(t, engine), body(), 600);
      assert.equal(res.status, 200);
      assert.equal(dataEvents(res.text).length, 3);
      assert.doesNotMatch(res.text, /\[DONE\]/);
      assert.ok(res.error !== null, 'the client gave up on a body that never ended');
    });

    test('a stream fault leaves non-streamed requests alone', async (t) => {
      const engine = await faulty(t, [{ kind: 'stall_mid_stream', after_chunks: 0 }]);
      const res = await post(socket(t, engine), body(0, false));
      assert.equal(res.status, 200);
      assert.equal((JSON.parse(res.text) as { object: string }).object, 'chat.completion');
    });

    test('drip holds the stream and sends one comment byte per interval, then resumes and finishes', async (t) => {
      const engine = await faulty(t, [{ kind: 'drip', after_chunks: 2, interval_ms: 120, bytes: 3 }]);
      const res = await post(socket(t, engine), body());
      assert.equal(res.error, null);
      assert.match(res.text, /data: \[DONE\]\n\n$/);
      assert.match(res.text, /\n\n:\.\.\ndata: /, 'a comment line of three dripped bytes before the held events');
      const bytes = res.reads.filter((r) => r.text === ':' || r.text === '.');
      assert.equal(bytes.length, 3, JSON.stringify(res.reads.map((r) => r.text.slice(0, 20))));
      for (let i = 1; i < bytes.length; i += 1) assert.ok(bytes[i]!.atMs - bytes[i - 1]!.atMs >= 100, 'spaced by the interval');
      assert.equal(dataEvents(res.text.slice(0, res.text.indexOf(':..'))).length, 2, 'after 2 data events');
    });

    test('close_mid_stream sends after_chunks data events, then the body breaks', async (t) => {
      const engine = await faulty(t, [{ kind: 'close_mid_stream', after_chunks: 2 }]);
      const res = await post(socket(t, engine), body());
      assert.equal(dataEvents(res.text).length, 2);
      assert.ok(res.error !== null, 'an unfinished chunked body is an error');
    });

    test('malformed_sse and bad_tool_arguments insert their line after after_chunks events and the stream goes on', async (t) => {
      const engine = await faulty(t, [
        { kind: 'malformed_sse', line: 'data: {oops', after_chunks: 1, times: 1 },
        { kind: 'bad_tool_arguments', after_chunks: 0 },
      ]);
      const c = socket(t, engine);
      const bad = await post(c, body());
      assert.equal(dataEvents(bad.text)[1], 'data: {oops');
      assert.match(bad.text, /\[DONE\]/);
      const tool = await post(c, body());
      const first = JSON.parse(dataEvents(tool.text)[0]!.slice(6)) as { choices: { delta: { tool_calls: { function: { arguments: string } }[] } }[] };
      assert.throws(() => JSON.parse(first.choices[0]!.delta.tool_calls[0]!.function.arguments));
    });

    test('close_idle advertises its Keep-Alive hint and, on arrival, drops a request on a socket idle past idle_ms', async (t) => {
      const engine = await faulty(t, [{ kind: 'close_idle', idle_ms: 100, advertise_timeout_s: 30 }]);
      const c = socket(t, engine);
      const first = await post(c, body());
      assert.equal(first.headers['keep-alive'], 'timeout=30');
      assert.equal((await post(c, body())).status, 200, 'reused at once: served');
      await new Promise((r) => setTimeout(r, 200));
      await assert.rejects(post(c, body()), (e: Error & { code?: string }) => ['UND_ERR_SOCKET', 'ECONNRESET'].includes(e.code ?? ''), 'the reuse after idle_ms is dropped');
      assert.equal(engine.stats().faultsFired.close_idle, 1);
    });

    test('close_idle on timer closes the idle socket itself after idle_ms', async (t) => {
      const engine = await faulty(t, [{ kind: 'close_idle', idle_ms: 100, on: 'timer' }]);
      const c = socket(t, engine);
      let disconnected = 0;
      c.on('disconnect', () => {
        disconnected += 1;
      });
      await post(c, body());
      await until(() => disconnected === 1, 10_000, 'the server to close the idle socket');
      assert.equal(engine.stats().faultsFired.close_idle, 1);
    });

    test('engine.close() ends hung, header-less and stalled responses at once', async (t) => {
      const engine = await startEngine({
        settings: engineSchema.parse({
          ...FAST,
          topology,
          faults: [
            { kind: 'hang', times: 1 },
            { kind: 'hang_before_headers', times: 1 },
            { kind: 'stall_mid_stream', after_chunks: 1 },
          ],
        }),
      });
      const pending = [0, 1, 2].map(() => post(new Client(engine.url), body(), 10_000).catch((e: Error) => e));
      await until(
        () => (engine.stats().faultsFired.stall_mid_stream ?? 0) === 1 && engine.stats().faultsFired.hang === 1 && engine.stats().faultsFired.hang_before_headers === 1,
        10_000,
        'all three faults',
      );
      const started = performance.now();
      await engine.close();
      const settled = await Promise.all(pending);
      const took = performance.now() - started;
      assert.ok(took < Math.max(1500, 1000 + loop.marginMs()), `closed and every client released in ${took.toFixed(0)} ms`);
      assert.equal(settled.length, 3);
      t.diagnostic(`close took ${took.toFixed(0)} ms`);
    });
  });
}

test('a fault list is validated with the workload: unknown keys and kinds are located errors', async (t) => {
  assert.throws(
    () => parseWorkload('engine:\n  faults:\n    - kind: stall_mid_stream\n      after_chunk: 3\n', 'w.yaml'),
    (e: Error) => /w\.yaml:4:7 +engine\.faults\.0\.after_chunk +unknown key "after_chunk"/.test(e.message),
  );
  // The valid keys are those of the fault's own kind, not of the first kind in the list.
  assert.throws(
    () => parseWorkload('engine:\n  faults: [{kind: drip, interval: 3}]\n', 'w.yaml'),
    (e: Error) => /unknown key "interval"; valid keys: kind, after_chunks, interval_ms, bytes, after_requests/.test(e.message),
  );
  assert.throws(
    () => parseWorkload('engine:\n  faults: [{kind: freeze}]\n', 'w.yaml'),
    (e: Error) => /engine\.faults\.0\.kind +must be one of hang, hang_before_headers/.test(e.message),
  );
  assert.throws(
    () => parseWorkload('engine:\n  faults: [{kind: close_idle}]\n', 'w.yaml'),
    (e: Error) => /engine\.faults\.0\.idle_ms +is required/.test(e.message),
  );
  const w = parseWorkload('engine:\n  faults: [{kind: drip}]\n', 'w.yaml');
  assert.deepEqual(w.engine.faults[0], { kind: 'drip', after_chunks: 2, interval_ms: 1000, bytes: 3, after_requests: 0, from_round: 1, every: 1, ratio: 1, times: null });
  const file = join(tempDir(t), 'faults.yaml');
  writeFileSync(file, '- kind: hang\n  from_round: 4\n- kind: http_error\n  status: 99\n');
  await assert.rejects(loadEngineFaults(file), (e: Error) => /faults\.yaml:4:11 +engine\.faults\.1\.status +must be at least 400/.test(e.message));
  writeFileSync(file, 'faults:\n  - kind: hang\n    from_round: 4\n');
  assert.deepEqual(
    (await loadEngineFaults(file)).map((f) => f.kind),
    ['hang'],
  );
  // A PD fault needs a PD deployment.
  assert.throws(
    () => parseWorkload('engine:\n  topology: single\n  faults: [{kind: inflight_pin}]\n', 'w.yaml'),
    (e: Error) => /engine\.faults\.0\.kind +inflight_pin happens between prefill and decode: it needs engine\.topology pd/.test(e.message),
  );
});

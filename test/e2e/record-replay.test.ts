// Record a harness through `roundload record` in front of the embedded engine, replay the trace against a fresh
// one, and hold the replay to the recording: conversations, rounds, prompt sizes, think times, socket reuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { rebuildSummary } from '../../src/results/index.js';
import { startEngine, type EngineHandle } from '../../src/engine/index.js';
import { engineSchema } from '../../src/config/schema.js';
import { startRecorder, readTrace, type Trace, type TraceRequest } from '../../src/trace/index.js';
import { systemPrompt } from '../../src/agent/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { LoopDelay } from '../helpers/loop-delay.js';

const ENGINE = { decode_step_ms: 3, output_tokens_min: 8, output_tokens_max: 24 };
const ENGINE_YAML = `{decode_step_ms: 3, output_tokens_min: 8, output_tokens_max: 24}`;
const WATCHDOG = `{connect_ms: 3000, headers_ms: 10000, first_token_ms: 10000, stall_ms: 10000, total_ms: 20000}`;

async function engine(t: import('node:test').TestContext): Promise<EngineHandle> {
  const e = await startEngine({ settings: engineSchema.parse(ENGINE) });
  t.after(() => e.close());
  return e;
}

/**
 * Runs `harness` against a recorder in front of a fresh engine; returns the trace and the margin its timings carry:
 * the recorder stamps both ends of a think time in this process, so each can be a loop delay late.
 */
async function record(
  t: import('node:test').TestContext,
  harness: (url: string, caFile: string | null) => Promise<void>,
  options: { tls?: boolean } = {},
): Promise<{ file: string; trace: Trace; marginMs: number }> {
  const upstream = await engine(t);
  const file = join(tempDir(t), 'trace.jsonl');
  const recorder = await startRecorder({ upstream: upstream.url, out: file, tls: options.tls === true });
  t.after(() => recorder.close());
  const delay = new LoopDelay();
  await harness(recorder.url, recorder.caFile);
  delay.stop();
  await recorder.close();
  return { file, trace: readTrace(file), marginMs: delay.marginMs() };
}

/** A roundload run as the harness, through the recorder. */
function roundloadHarness(t: import('node:test').TestContext, agents: string) {
  return async (url: string, caFile: string | null): Promise<void> => {
    const workload = parseWorkload(
      `name: harness
target: {url: ${JSON.stringify(url)}${caFile === null ? '' : `, tls: {ca: ${JSON.stringify(caFile)}}`}}
agents: ${agents}
conversation: {system_prompt_tokens: 1200, first_user_tokens: 200, tool_result_tokens: 150, tool_result_growth_tokens: 50, max_tokens: 64}
watchdog: ${WATCHDOG}
monitor: {canary_interval_s: 0}
`,
      'harness.yaml',
    );
    // No preflight request: the harness's traffic is its agents' alone, so counts are exact.
    const { status } = await executeRun({ workload, out: join(tempDir(t), 'harness'), preflight: false });
    assert.equal(status, 'completed');
  };
}

/**
 * Replays `file` against a fresh embedded engine; returns its records and the margin its timings carry (the
 * client stamps both ends of a think time in this process, so each can be a loop delay late).
 */
async function replay(t: import('node:test').TestContext, file: string, connection = 'as-recorded'): Promise<{ records: RequestRecord[]; summary: Summary; marginMs: number; out: string }> {
  const out = join(tempDir(t), 'replay');
  const workload = parseWorkload(
    `name: replay
replay: {file: ${JSON.stringify(file)}, connection: ${connection}}
engine: ${ENGINE_YAML}
watchdog: ${WATCHDOG}
monitor: {canary_interval_s: 0}
`,
    'replay.yaml',
  );
  const delay = new LoopDelay();
  const result = await executeRun({ workload, out });
  delay.stop();
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl')).sort((a, b) => a.run_ms - b.run_ms);
  return { records, summary: result.summary, marginMs: delay.marginMs(), out };
}

const key = (conversation: string, round: number): string => `${conversation}#${round}`;

/** Everything the issue asks of a replay, checked request by request against the trace. */
function assertFaithful(trace: Trace, records: RequestRecord[], loopMarginMs: number, options: { idle: boolean }): void {
  const recorded = new Map(trace.requests.map((r) => [key(r.conversation, r.round), r]));
  const rounds = (list: { conversation: string; round: number }[]) => {
    const m = new Map<string, number[]>();
    for (const r of list)
      m.set(
        r.conversation,
        [...(m.get(r.conversation) ?? []), r.round].sort((a, b) => a - b),
      );
    return m;
  };
  assert.deepEqual(rounds(records), rounds(trace.requests), 'the same conversations with the same rounds');
  assert.ok(
    records.every((r) => r.status === 'ok'),
    JSON.stringify(records.filter((r) => r.status !== 'ok').map((r) => r.error ?? r.hang)),
  );
  // Timing margins: 20 ms for loopback and parsing, plus what the event loop was measured to add to the recorded
  // interval and to the replayed one (the caller sums the recording's margin and the replay's).
  const marginMs = 20 + loopMarginMs;
  const pairs = new Map<string, string>();
  const back = new Map<string, number>();
  const byConversation = new Map<string, RequestRecord>();
  for (const r of records) {
    const rec = recorded.get(key(r.conversation, r.round)) as TraceRequest;
    const ratio = r.prompt_tokens! / rec.response.prompt_tokens!;
    assert.ok(Math.abs(ratio - 1) <= 0.05, `${r.conversation} round ${r.round}: prompt ${r.prompt_tokens} tokens vs ${rec.response.prompt_tokens} recorded`);
    const previous = byConversation.get(r.conversation);
    if (previous !== undefined && rec.think_ms !== null) {
      const thinkMs = r.run_ms - (previous.run_ms + previous.e2e_ms);
      // On a connection other conversations share, a request may wait its turn there, as the harness's did:
      // then its think time is longer, and its socket's idle gap is the recorded one.
      const heldByItsTurn = thinkMs > rec.think_ms && rec.connection?.idle_ms != null && Math.abs((r.connection?.idle_ms ?? -1e9) - rec.connection.idle_ms) <= marginMs;
      assert.ok(
        Math.abs(thinkMs - rec.think_ms) <= marginMs || heldByItsTurn,
        `${r.conversation} round ${r.round}: think ${thinkMs.toFixed(1)} ms vs ${rec.think_ms} recorded (margin ${marginMs.toFixed(1)}), socket idle ${r.connection?.idle_ms} vs ${rec.connection?.idle_ms}`,
      );
    }
    byConversation.set(r.conversation, r);
    // Socket reuse: recorded and replayed connections pair one to one, and each request is the same nth on it.
    const conn = r.connection!;
    const partner = pairs.get(String(rec.connection!.id));
    if (partner === undefined) {
      assert.equal(back.get(conn.id), undefined, `replayed socket ${conn.id} already stands for another recorded connection`);
      pairs.set(String(rec.connection!.id), conn.id);
      back.set(conn.id, rec.connection!.id);
    } else assert.equal(conn.id, partner, `${r.conversation} round ${r.round} went out on another socket than recorded connection ${rec.connection!.id}'s`);
    assert.equal(conn.nth, rec.connection!.nth, `${r.conversation} round ${r.round}: nth on its socket`);
    if (options.idle && rec.connection!.idle_ms !== null) {
      assert.ok(Math.abs((conn.idle_ms ?? -1e9) - rec.connection!.idle_ms) <= marginMs, `${r.conversation} round ${r.round}: socket idle ${conn.idle_ms} ms vs ${rec.connection!.idle_ms} recorded`);
    }
  }
}

test('a roundload run recorded through `roundload record` replays with the same conversations, prompt sizes, think times and socket reuse', async (t) => {
  const { file, trace, marginMs: recordMarginMs } = await record(t, roundloadHarness(t, '{count: 3, rounds: 4, think_time_ms: 80}'));
  assert.equal(trace.requests.length, 12);
  assert.equal(new Set(trace.requests.map((r) => r.conversation)).size, 3, 'conversations inferred from message histories');
  const text = readFileSync(file, 'utf8');
  const system = systemPrompt(parseWorkload('conversation: {system_prompt_tokens: 1200}', 'x.yaml').conversation);
  assert.ok(system.length > 1000 && !text.includes(system.slice(200, 260)), 'no message text in the trace without --content');
  assert.ok(!text.includes('"kind":"content"'));
  const { records, summary, marginMs, out } = await replay(t, file);
  assertFaithful(trace, records, recordMarginMs + marginMs, { idle: true });
  assert.equal(summary.replay?.sockets.same, 12);
  // report.html carries the comparison too, round by round.
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /<section id="replay"><h2>Replay against the recording<\/h2>/);
  assert.match(html, /sockets as recorded: 12 of 12 requests on the same nth request/);
  assert.equal((html.match(/<section id="replay">[\s\S]*?<\/section>/)?.[0].match(/<tr>/g) ?? []).length, 1 + 4, 'a header and 4 rounds');
  assert.deepEqual(
    summary.replay?.rounds.map((r) => [r.recorded.requests, r.replayed.requests]),
    [
      [3, 3],
      [3, 3],
      [3, 3],
      [3, 3],
    ],
  );
  assert.ok(summary.replay.rounds.every((r) => Math.abs(r.prompt_tokens_diff_pct!) <= 5));
  // A killed replay (no summary.json) still gets its comparison, made again from the trace run.json names;
  // with the trace gone it says so instead.
  rmSync(join(out, 'summary.json'));
  const rebuilt = await rebuildSummary(out);
  assert.deepEqual(rebuilt.summary.replay, summary.replay);
  renameSync(file, `${file}.moved`);
  const orphan = await rebuildSummary(out);
  assert.equal(orphan.summary.replay, undefined);
  assert.ok(
    orphan.notes.some((n) => n.includes(`the replay's trace ${file} could not be read again`)),
    orphan.notes.join('\n'),
  );
});

test('agents sharing a pool of two connections: as-recorded replays each request on its recorded connection, the nth as recorded', async (t) => {
  const { file, trace, marginMs: recordMarginMs } = await record(t, roundloadHarness(t, '{count: 4, rounds: 3, think_time_ms: 40, connection: pool, pool_connections: 2, start_stagger_ms: 60}'));
  const connections = new Set(trace.requests.map((r) => r.connection?.id));
  assert.equal(connections.size, 2, 'the harness used its two pooled connections');
  const { records, marginMs } = await replay(t, file);
  assertFaithful(trace, records, recordMarginMs + marginMs, { idle: false });
});

test('a scripted harness on the official openai client is recorded and replayed faithfully', async (t) => {
  const tools = [
    {
      type: 'function' as const,
      function: { name: 'read_file', description: 'Read a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    },
  ];
  const harness = async (url: string): Promise<void> => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const conversation = async (n: number): Promise<void> => {
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: 'system', content: `You are a careful coding agent. ${'Follow the repository conventions. '.repeat(60)}` },
        { role: 'user', content: `Task ${n}: find why the parser drops the last line. ${'Context line. '.repeat(40)}` },
      ];
      for (let round = 1; round <= 3; round += 1) {
        const stream = await client.chat.completions.create({ model: 'deepseek-v4-flash', messages, tools, stream: true, stream_options: { include_usage: true }, max_tokens: 64 });
        let content = '';
        const calls: { id: string; name: string; arguments: string }[] = [];
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta;
          content += delta?.content ?? '';
          for (const c of delta?.tool_calls ?? []) {
            const call = (calls[c.index] ??= { id: '', name: '', arguments: '' });
            call.id ||= c.id ?? '';
            call.name ||= c.function?.name ?? '';
            call.arguments += c.function?.arguments ?? '';
          }
        }
        if (calls.length > 0) {
          messages.push({ role: 'assistant', content: content || null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) });
          for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: `contents of the file, round ${round}: ${'x = parse(line)\n'.repeat(30 * round)}` });
        } else {
          messages.push({ role: 'assistant', content });
          messages.push({ role: 'user', content: `Go on with round ${round + 1}. ${'Keep the tests green. '.repeat(10)}` });
        }
        await sleep(60);
      }
    };
    await Promise.all([conversation(1), sleep(30).then(() => conversation(2))]);
  };
  const { file, trace, marginMs: recordMarginMs } = await record(t, harness);
  assert.equal(trace.requests.length, 6);
  assert.equal(new Set(trace.requests.map((r) => r.conversation)).size, 2);
  assert.ok(!readFileSync(file, 'utf8').includes('careful coding agent'), 'no message text without --content');
  const { records, marginMs } = await replay(t, file);
  assertFaithful(trace, records, recordMarginMs + marginMs, { idle: false });
});

test("recording through TLS with the hop's CA: the harness trusts the printed CA, the trace says tls", async (t) => {
  const { trace } = await record(t, roundloadHarness(t, '{count: 2, rounds: 2, think_time_ms: 20}'), { tls: true });
  assert.equal(trace.header.tls, true);
  assert.equal(trace.requests.length, 4);
  assert.ok(trace.requests.every((r) => r.response.status === 200 && r.response.error === null));
});

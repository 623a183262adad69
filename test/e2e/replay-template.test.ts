// Replay true to a real chat template from round 1: a harness recorded in front of a server with llama.cpp's own
// tokenizer and Qwen2.5 template (tiny-tools.gguf; tool instructions rendered into the system turn) replays with
// each round's prompt tokens within ±3% of the recorded ones, the first sized by the server's rendering of it
// (llama.cpp's /apply-template then /tokenize, vLLM's /tokenize with messages) or, on a server with neither, by
// one probe request of its exact shape that is not a request of the run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { startRecorder, readTrace } from '../../src/trace/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { ggufChat, ggufSkip, loadGguf, type GgufEndpoints, type LlamaModel } from '../helpers/gguf-chat.js';
import type { FakeChat } from '../helpers/fake-chat.js';

const WATCHDOG = `{connect_ms: 3000, headers_ms: 10000, first_token_ms: 10000, stall_ms: 10000, total_ms: 20000}`;
const CODE = 'if (lines[i].length > 0) { out.push(parse(lines[i], 4)); }\n';

/** The model lives outside the repository (../shared/models/README.md) and node-llama-cpp is an optional install
 * (`npm run setup:llama`): without either the tests say which and skip. */
const skip = ggufSkip;
let model: LlamaModel | null = null;
before(async () => {
  if (skip === false) model = await loadGguf();
});
after(async () => {
  await model?.dispose();
});

/** Three conversations of four rounds with one tool, through the official client. */
async function harness(url: string): Promise<void> {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
  const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'Read a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
  const conversation = async (n: number): Promise<void> => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: `You are a coding agent; keep to the style of: ${CODE.repeat(6)}` },
      { role: 'user', content: `Task ${n}: the parser drops the last line of ${CODE.repeat(2)}` },
    ];
    for (let round = 1; round <= 4; round += 1) {
      const stream = await client.chat.completions.create({ model: 'm', messages, tools, stream: true, stream_options: { include_usage: true }, max_tokens: 64 });
      let content = '';
      const calls: { id: string; name: string; arguments: string }[] = [];
      for await (const c of stream) {
        content += c.choices[0]?.delta?.content ?? '';
        for (const d of c.choices[0]?.delta?.tool_calls ?? []) calls[d.index] = { id: d.id ?? '', name: d.function?.name ?? '', arguments: d.function?.arguments ?? '' };
      }
      if (calls.length > 0) {
        messages.push({ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) });
        for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: `// ${c.arguments}\n${CODE.repeat(3 * round + n)}` });
      } else {
        messages.push({ role: 'assistant', content });
        messages.push({ role: 'user', content: `Now round ${round + 1}: ${CODE}` });
      }
    }
  };
  await Promise.all([conversation(1), sleep(100).then(() => conversation(2)), sleep(200).then(() => conversation(3))]);
}

/** The trace of the harness recorded in front of the llama.cpp-style server. */
async function recordTrace(t: import('node:test').TestContext): Promise<string> {
  assert.ok(model !== null);
  const upstream = await ggufChat(t, model);
  const file = join(tempDir(t), 'trace.jsonl');
  const recorder = await startRecorder({ upstream: upstream.url, out: file });
  t.after(() => recorder.close());
  await harness(recorder.url);
  await recorder.close();
  assert.equal(readTrace(file).requests.length, 12);
  return file;
}

/** Replays the trace against a server with `endpoints`; every request answered. */
async function replay(t: import('node:test').TestContext, file: string, endpoints: GgufEndpoints): Promise<{ server: FakeChat; records: RequestRecord[]; summary: Summary; sizing: unknown }> {
  assert.ok(model !== null);
  const server = await ggufChat(t, model, endpoints);
  const out = join(tempDir(t), 'replay');
  const workload = parseWorkload(
    `name: replay
target: {url: ${JSON.stringify(server.url)}, model: m}
replay: {file: ${JSON.stringify(file)}}
watchdog: ${WATCHDOG}
monitor: {canary_interval_s: 0}
`,
    'replay.yaml',
  );
  const result = await executeRun({ workload, out, preflight: false });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.ok(records.every((r) => r.status === 'ok'));
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as { replay_sizing?: unknown };
  return { server, records, summary: result.summary, sizing: manifest.replay_sizing };
}

const perRound = (s: Summary): string => s.replay!.rounds.map((r) => `round ${r.round} ${r.prompt_tokens_diff_pct}%`).join(', ');

/** Every round's replayed prompt tokens within ±3% of the recorded ones, round 1 included. */
function assertWithin3(s: Summary): void {
  const rounds = s.replay!.rounds;
  assert.equal(rounds.length, 4);
  for (const r of rounds) assert.ok(Math.abs(r.prompt_tokens_diff_pct!) <= 3, `round ${r.round}: ${r.prompt_tokens_diff_pct}% (${perRound(s)})`);
}

test("a harness recorded on llama.cpp's tokenizer and Qwen2.5 template replays within ±3% per round from round 1", { skip }, async (t) => {
  const file = await recordTrace(t);
  for (const endpoints of ['llama.cpp', 'vllm'] as const) {
    const { records, summary } = await replay(t, file, endpoints);
    t.diagnostic(`${endpoints}: per round ${perRound(summary)}`);
    assertWithin3(summary);
    assert.ok(
      records.filter((r) => r.round === 1).every((r) => r.replay?.sizing?.by === 'tokenize'),
      `${endpoints}: first requests sized by the rendered template`,
    );
  }
});

test('on a server with no tokenize endpoint but honest usage, one unrecorded probe of the first request keeps every round within ±3% from round 1', { skip }, async (t) => {
  const file = await recordTrace(t);
  const { server, records, summary, sizing } = await replay(t, file, 'none');
  assert.match(String(sizing), /the first request is probed once in its exact shape/, 'run.json says a probe sized it');
  t.diagnostic(`probe: per round ${perRound(summary)}`);
  const recorded = new Map(readTrace(file).requests.map((r) => [r.seq, r.response.prompt_tokens]));
  t.diagnostic(
    `each request (recorded → replayed): ${records.map((r) => `${r.conversation}/${r.round} ${recorded.get(r.replay!.seq)} → ${r.prompt_tokens} (scale ${r.replay?.sizing?.scale})`).join(', ')}`,
  );
  assertWithin3(summary);
  // The server got the 12 requests of the replay and two probes (a synthetic sample, the first request's shape),
  // both with max_tokens 1 and not streamed; neither is a request of the run.
  const chats = server.requests.filter((r) => r.url.endsWith('/chat/completions'));
  const probes = chats.filter((r) => r.body?.stream !== true);
  assert.equal(records.length, 12);
  assert.equal(chats.length, 14);
  assert.equal(probes.length, 2);
  assert.ok(probes.every((r) => r.body?.max_tokens === 1));
  assert.ok(Array.isArray(probes[1]!.body?.tools), "the second probe has the first request's tools");
  assert.equal(summary.totals.requests, 12, 'the probes are not counted as requests');
  assert.equal(summary.replay!.match.sized.probe, 3, 'each first request sized by the probe');
  assert.ok(
    records.filter((r) => r.round === 1).every((r) => r.replay?.sizing?.by === 'probe'),
    'first requests sized by the probe',
  );
});

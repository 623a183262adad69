// Replay true to a real chat template from round 1: a harness recorded in front of a server with llama.cpp's own
// tokenizer and Qwen2.5 template (tiny-tools.gguf; tool instructions rendered into the system turn) replays with
// each round's prompt tokens within ±3% of the recorded ones, the first sized by /apply-template then /tokenize.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import type { LlamaModel } from 'node-llama-cpp';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { startRecorder, readTrace } from '../../src/trace/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { GGUF, ggufChat, loadGguf } from '../helpers/gguf-chat.js';

const WATCHDOG = `{connect_ms: 3000, headers_ms: 10000, first_token_ms: 10000, stall_ms: 10000, total_ms: 20000}`;
const CODE = 'if (lines[i].length > 0) { out.push(parse(lines[i], 4)); }\n';

/** The model lives outside the repository (/work/shared/models/README.md): without it the test says so and skips. */
const skip = existsSync(GGUF) ? false : `${GGUF} is not on this machine`;
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

test("a harness recorded on llama.cpp's tokenizer and Qwen2.5 template replays within ±3% per round from round 1", { skip }, async (t) => {
  assert.ok(model !== null);
  const upstream = await ggufChat(t, model);
  const file = join(tempDir(t), 'trace.jsonl');
  const recorder = await startRecorder({ upstream: upstream.url, out: file });
  t.after(() => recorder.close());
  await harness(recorder.url);
  await recorder.close();
  const trace = readTrace(file);
  assert.equal(trace.requests.length, 12);

  const server = await ggufChat(t, model);
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
  const rounds = result.summary.replay!.rounds;
  t.diagnostic(`per round: ${rounds.map((r) => `round ${r.round} ${r.prompt_tokens_diff_pct}%`).join(', ')}`);
  assert.equal(rounds.length, 4);
  for (const r of rounds) assert.ok(Math.abs(r.prompt_tokens_diff_pct!) <= 3, `round ${r.round}: ${r.prompt_tokens_diff_pct}%`);
  const firsts = records.filter((r) => r.round === 1);
  assert.ok(
    firsts.every((r) => r.replay?.sizing?.by === 'tokenize'),
    'first requests sized by the rendered template',
  );
});

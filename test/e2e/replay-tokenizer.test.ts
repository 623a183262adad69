// Replay true to the server's tokenizer: a harness recorded in front of a server that counts tokens its own way
// (code-like text: about 2.5 characters a token; roundload's synthetic words: about 6) replays with every round
// within ±3% of the recorded prompt tokens from round 1: with a tokenize endpoint, or, when only its usage tells,
// by one unrecorded probe of the first request's shape. By recorded characters alone it sends far fewer tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { startRecorder, readTrace, type Trace } from '../../src/trace/index.js';
import type { RequestRecord } from '../../src/types/index.js';
import type { Summary } from '../../src/analysis/index.js';
import { readJsonl, tempDir } from '../helpers/tmp.js';
import { tokenizingChat } from '../helpers/fake-tokenizer.js';

const WATCHDOG = `{connect_ms: 3000, headers_ms: 10000, first_token_ms: 10000, stall_ms: 10000, total_ms: 20000}`;
const CODE = 'if (lines[i].length > 0) { out.push(parse(lines[i], 4)); }\n';

/** Three conversations of four rounds (user → tool call → tool result → text → user → …), code-like text. */
async function harness(url: string): Promise<void> {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
  const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'Read a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
  const conversation = async (n: number): Promise<void> => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: `You are a coding agent; keep to the style of: ${CODE.repeat(20)}` },
      { role: 'user', content: `Task ${n}: the parser drops the last line of ${CODE.repeat(4)}` },
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
        for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: `// ${c.arguments}\n${CODE.repeat(8 * round + n)}` });
      } else {
        messages.push({ role: 'assistant', content });
        messages.push({ role: 'user', content: `Now round ${round + 1}: ${CODE.repeat(3)}` });
      }
      await sleep(40);
    }
  };
  // Later conversations start once the first has its first answer: they may start calibrated.
  await Promise.all([conversation(1), sleep(250).then(() => conversation(2)), sleep(500).then(() => conversation(3))]);
}

async function recordTrace(t: import('node:test').TestContext): Promise<{ file: string; trace: Trace }> {
  const upstream = await tokenizingChat(t, null);
  const file = join(tempDir(t), 'trace.jsonl');
  const recorder = await startRecorder({ upstream: upstream.url, out: file });
  t.after(() => recorder.close());
  await harness(recorder.url);
  await recorder.close();
  return { file, trace: readTrace(file) };
}

async function replay(t: import('node:test').TestContext, file: string, tokenize: 'llama.cpp' | 'vllm' | null, sizing = 'server'): Promise<{ records: RequestRecord[]; summary: Summary }> {
  const server = await tokenizingChat(t, tokenize);
  const out = join(tempDir(t), 'replay');
  const workload = parseWorkload(
    `name: replay
target: {url: ${JSON.stringify(server.url)}, model: m}
replay: {file: ${JSON.stringify(file)}, sizing: ${sizing}}
watchdog: ${WATCHDOG}
monitor: {canary_interval_s: 0}
`,
    'replay.yaml',
  );
  const result = await executeRun({ workload, out, preflight: false });
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl')).sort((a, b) => a.run_ms - b.run_ms);
  assert.ok(
    records.every((r) => r.status === 'ok'),
    JSON.stringify(records.filter((r) => r.status !== 'ok').map((r) => r.error)),
  );
  return { records, summary: result.summary };
}

/** Each request's replayed vs recorded prompt tokens, in percent off. */
function offPct(trace: Trace, records: RequestRecord[]): { round: number; conversation: string; pct: number; by: string | undefined }[] {
  const bySeq = new Map(trace.requests.map((r) => [r.seq, r]));
  return records.map((r) => {
    const recorded = bySeq.get(r.replay!.seq)!.response.prompt_tokens!;
    return { round: r.round, conversation: r.conversation, pct: ((r.prompt_tokens! - recorded) / recorded) * 100, by: r.replay?.sizing?.by };
  });
}

const roundFigures = (s: Summary): string =>
  `${s.replay!.rounds.map((r) => `round ${r.round} ${r.recorded.prompt_tokens_mean}→${r.replayed.prompt_tokens_mean} ${r.prompt_tokens_diff_pct}%`).join(', ')}; mean |off| ${s.replay!.match.prompt_mean_abs_pct}%, sized ${JSON.stringify(s.replay!.match.sized)}`;

const within = (limitPct: number, rows: { pct: number }[]): boolean => rows.every((r) => Math.abs(r.pct) <= limitPct);

/** The issue's measure: each round's replayed prompt tokens against the recorded ones (all conversations of
 * the round together, as the replay comparison reports them), from round `from` on. A single request may be
 * further off: the density its new text is sized with depends on which answers came back first, which the
 * machine's load decides (seen: +3.1% in a CI run, +5.1% beside the stress run's busy loops, its round at
 * +2.7%). It is held to ±8%, still far from the ~50% that sizing by characters is off. */
const roundsWithin = (limitPct: number, s: Summary, from = 1): boolean => s.replay!.rounds.filter((r) => r.round >= from).every((r) => Math.abs(r.prompt_tokens_diff_pct!) <= limitPct);

test("a harness recorded on a server with another tokenizer replays within ±3% per round from round 1: by one probe of the first request and the server's usage, or with its /tokenize", async (t) => {
  const { file, trace } = await recordTrace(t);
  assert.equal(trace.requests.length, 12);
  // By recorded characters the replay sends far lighter prompts: the problem this sizing solves.
  const characters = await replay(t, file, null, 'characters');
  const plain = offPct(trace, characters.records);
  assert.ok(characters.summary.replay!.match.first_ratio! > 1.2, `ratio recorded/replayed: ${characters.summary.replay!.match.first_ratio}`);
  assert.ok(
    plain.every((r) => r.pct < -20),
    `by characters: ${plain.map((r) => r.pct.toFixed(1)).join(' ')}`,
  );
  t.diagnostic(`characters: ${roundFigures(characters.summary)}`);

  const usage = await replay(t, file, null);
  const byUsage = offPct(trace, usage.records);
  const later = byUsage.filter((r) => r.round >= 2);
  assert.ok(roundsWithin(3, usage.summary), `usage only (and one probe of the first request), every round: ${roundFigures(usage.summary)}`);
  assert.ok(
    byUsage.filter((r) => r.round === 1).every((r) => r.by === 'probe'),
    'first requests sized by the probe of the first one',
  );
  assert.ok(within(8, later), `usage only, each request of rounds ≥ 2: ${JSON.stringify(later)}`);
  assert.ok(
    later.every((r) => r.by === 'usage'),
    'sized from the usage',
  );
  t.diagnostic(`usage: ${roundFigures(usage.summary)}`);

  for (const kind of ['llama.cpp', 'vllm'] as const) {
    const withTokenize = await replay(t, file, kind);
    const all = offPct(trace, withTokenize.records);
    assert.ok(roundsWithin(3, withTokenize.summary), `${kind} /tokenize, every round: ${roundFigures(withTokenize.summary)}`);
    assert.ok(within(5, all), `${kind} /tokenize, each request: ${JSON.stringify(all)}`);
    assert.equal(all.find((r) => r.round === 1 && r.conversation === 'c1')?.by, 'tokenize', 'the first request is sized with /tokenize');
    assert.ok(Math.abs(withTokenize.summary.replay!.match.prompt_mean_abs_pct!) <= 3);
    t.diagnostic(`${kind}: ${roundFigures(withTokenize.summary)}`);
  }
});

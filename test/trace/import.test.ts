import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { importTrace, readTrace, traceStats, formatTraceStats } from '../../src/trace/index.js';
import { TraceError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

const sys = { role: 'system', content: 'You are helpful.' };
const u1 = { role: 'user', content: 'Fix the bug in parser.ts' };
const a1 = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"parser.ts"}' } }] };
const t1 = { role: 'tool', tool_call_id: 'c1', content: 'export function parse() {}' };
const u2 = { role: 'user', content: 'Write a haiku' };

function openAiLog(dir: string, timed: boolean): string {
  const file = join(dir, 'log.jsonl');
  const at = (ms: number) => (timed ? { timestamp: new Date(Date.UTC(2026, 0, 1) + ms).toISOString() } : {});
  const lines = [
    { ...at(0), request: { model: 'm', stream: true, messages: [sys, u1] }, response: { choices: [{ message: a1, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 20, completion_tokens: 9 } } },
    { ...at(100), model: 'm', messages: [sys, u2] },
    { ...at(2500), model: 'm', messages: [sys, u1, a1, t1] },
  ];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return file;
}

test('an OpenAI-format log becomes conversations by history, with think times from its timestamps and no text', (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'trace.jsonl');
  const result = importTrace({ format: 'openai', file: openAiLog(dir, true), out });
  assert.deepEqual(result, { requests: 3, conversations: 2 });
  const trace = readTrace(out);
  assert.equal(trace.header.source, 'import-openai');
  assert.deepEqual(
    trace.requests.map((r) => [r.conversation, r.round, r.start_ms, r.think_ms]),
    [
      ['c1', 1, 0, null],
      ['c2', 1, 100, null],
      ['c1', 2, 2500, 2500],
    ],
  );
  assert.equal(trace.requests[0]?.response.prompt_tokens, 20);
  assert.ok(!readFileSync(out, 'utf8').includes('haiku'));
  assert.match(formatTraceStats(traceStats(trace)), /3 requests in 2 conversations/);
});

test("an untimed OpenAI log spaces each conversation's rounds by --think-ms; --content keeps the messages once each", (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'trace.jsonl');
  importTrace({ format: 'openai', file: openAiLog(dir, false), out, thinkMs: 700, content: true });
  const trace = readTrace(out);
  assert.deepEqual(
    trace.requests.map((r) => [r.conversation, r.round, r.start_ms]),
    [
      ['c1', 1, 0],
      ['c2', 1, 0],
      ['c1', 2, 700],
    ],
  );
  assert.equal(trace.contents.size, 5, 'system, two user turns, the assistant call and the tool result');
  assert.ok([...trace.contents.values()].some((m) => m.content === 'Write a haiku'));
});

test('a Mooncake trace becomes one-round conversations whose shared hash_ids blocks are the same text', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'mooncake.jsonl');
  writeFileSync(
    file,
    [
      { timestamp: 0, input_length: 1100, output_length: 20, hash_ids: [1, 2, 3] },
      { timestamp: 250, input_length: 700, output_length: 5, hash_ids: [1, 9] },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n'),
  );
  const out = join(dir, 'trace.jsonl');
  importTrace({ format: 'mooncake', file, out, blockTokens: 512 });
  const [a, b] = readTrace(out).requests;
  assert.equal(a?.request.messages[0]?.chars, 4400);
  assert.deepEqual(
    a?.request.messages[0]?.segments?.map((s) => s.chars),
    [2048, 2048, 304],
  );
  assert.equal(a?.request.messages[0]?.segments?.[0]?.hash, b?.request.messages[0]?.segments?.[0]?.hash);
  assert.equal(b?.start_ms, 250);
  assert.equal(b?.request.max_tokens, 5);
});

test('bad input is a located trace error; a torn last line (a killed recorder) is skipped', (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, `${JSON.stringify({ model: 'm', messages: [u1] })}\n{"messages": 3}\n`);
  assert.throws(
    () => importTrace({ format: 'openai', file: bad, out: join(dir, 'x.jsonl') }),
    (e: unknown) => e instanceof TraceError && /bad\.jsonl:2: no messages list/.test(e.message),
  );
  const out = join(dir, 'trace.jsonl');
  importTrace({ format: 'openai', file: openAiLog(dir, true), out });
  appendFileSync(out, '{"kind":"request","seq":9,"t":"2026');
  const trace = readTrace(out);
  assert.equal(trace.requests.length, 3);
  assert.deepEqual(
    trace.skipped.map((s) => s.line),
    [5],
  );
  writeFileSync(bad, '{"kind":"request"}\n');
  assert.throws(() => readTrace(bad), /not a roundload trace/);
});

test('an imported trace is created 0600: with --content it holds every prompt', (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'trace.jsonl');
  importTrace({ format: 'openai', file: openAiLog(dir, false), out, content: true });
  assert.match(readFileSync(out, 'utf8'), /Fix the bug in parser\.ts/);
  assert.equal(statSync(out).mode & 0o777, 0o600);
});

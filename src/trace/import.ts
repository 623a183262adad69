// `roundload trace import`: traces users already have, as roundload traces. OpenAI-format logs (one request
// body per line, or `{request, response}`) get their conversations inferred like a recording's; Mooncake traces
// (`timestamp`, `input_length`, `output_length`, `hash_ids`) become one-round conversations whose prompt is made
// of the listed blocks, so blocks shared between requests stay shared.
import { readFileSync } from 'node:fs';
import { TraceError } from '../errors.js';
import { TraceFileWriter } from './file-writer.js';
import { VERSION } from '../version.js';
import { ConversationInference } from './conversations.js';
import { Hasher, answerHash, contentText, requestContents, requestShape } from './shape.js';
import { TRACE_FORMAT, TRACE_VERSION, type TraceHeader, type TraceRequest, type TraceResponse } from './types.js';
import { isObject } from '../util/index.js';

export interface ImportOptions {
  format: 'openai' | 'mooncake';
  file: string;
  out: string;
  /** OpenAI logs: keep message contents. @default false */
  content?: boolean;
  /** OpenAI logs without timestamps: think time between a conversation's rounds. @default 1000 */
  thinkMs?: number;
  /** Mooncake: tokens per `hash_ids` block. @default 512 */
  blockTokens?: number;
}

export interface ImportResult {
  requests: number;
  conversations: number;
}

/** A timestamp in ms: a number (seconds when it looks like Unix seconds, else ms) or an ISO string. */
function timestampMs(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v > 1e9 && v < 1e11 ? v * 1000 : v;
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? null : t;
  }
  return null;
}

function lines(file: string): { n: number; value: Record<string, unknown> }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new TraceError(`cannot read ${file}: ${(cause as Error).message}`, { cause });
  }
  const out: { n: number; value: Record<string, unknown> }[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new TraceError(`${file}:${i + 1}: not a JSON line: ${raw.slice(0, 80)}`);
    }
    if (!isObject(value)) throw new TraceError(`${file}:${i + 1}: each line must be a JSON object`);
    out.push({ n: i + 1, value });
  });
  if (out.length === 0) throw new TraceError(`${file}: no lines to import`);
  return out;
}

function header(opts: ImportOptions, content: boolean): TraceHeader {
  return {
    kind: 'header',
    format: TRACE_FORMAT,
    version: TRACE_VERSION,
    roundload: VERSION,
    started_at: new Date().toISOString(),
    source: opts.format === 'openai' ? 'import-openai' : 'import-mooncake',
    upstream: null,
    tls: false,
    content,
    session_header: null,
    hash: 'hmac-sha256-64',
    imported_from: opts.file,
  };
}

const unknownResponse = (): TraceResponse => ({
  status: null,
  by_proxy: false,
  headers_ms: null,
  ttft_ms: null,
  first_chunk_ms: null,
  e2e_ms: null,
  prompt_tokens: null,
  completion_tokens: null,
  cached_tokens: null,
  reasoning_tokens: null,
  finish_reason: null,
  content_chars: 0,
  reasoning_chars: 0,
  tool_calls: [],
  chunks: 0,
  bytes: 0,
  error: null,
});

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The response of a logged `{request, response}` (a chat.completion object), as far as it tells. */
function loggedResponse(v: unknown, hasher: Hasher): { response: TraceResponse; answer: string | null } {
  const response = unknownResponse();
  if (!isObject(v)) return { response, answer: null };
  const choice = Array.isArray(v.choices) && isObject(v.choices[0]) ? v.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const usage = isObject(v.usage) ? v.usage : {};
  const { text } = contentText(message.content);
  const calls = Array.isArray(message.tool_calls)
    ? message.tool_calls.map((c) => {
        const fn = isObject(c) && isObject(c.function) ? c.function : {};
        return { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof fn.arguments === 'string' ? fn.arguments : '' };
      })
    : [];
  response.status = 200;
  response.prompt_tokens = num(usage.prompt_tokens);
  response.completion_tokens = num(usage.completion_tokens);
  response.cached_tokens = isObject(usage.prompt_tokens_details) ? num(usage.prompt_tokens_details.cached_tokens) : null;
  response.finish_reason = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
  response.content_chars = text.length;
  response.tool_calls = calls.map((c) => ({ name: c.name, arguments_chars: c.arguments.length }));
  return { response, answer: answerHash(hasher, text, calls) };
}

function importOpenAi(opts: ImportOptions, writer: TraceFileWriter): ImportResult {
  const hasher = new Hasher();
  const inference = new ConversationInference();
  const content = opts.content === true;
  const thinkMs = opts.thinkMs ?? 1000;
  const rows = lines(opts.file).map(({ n, value }) => {
    const body = isObject(value.request) ? value.request : isObject(value.body) ? value.body : value;
    if (!Array.isArray(body.messages)) throw new TraceError(`${opts.file}:${n}: no messages list (expected a chat request body, or {request: body, response})`);
    const meta = isObject(value.metadata) ? value.metadata : {};
    const session = [value.session_id, value.conversation_id, meta.session_id, meta.conversation_id].find((s) => typeof s === 'string' && s !== '') as string | undefined;
    return { n, body, at: timestampMs(value.timestamp ?? value.created_at ?? value.time ?? value.t), session: session ?? null, logged: value.response };
  });
  const timed = rows.every((r) => r.at !== null);
  const first = timed ? Math.min(...rows.map((r) => r.at!)) : 0;
  if (timed) rows.sort((a, b) => a.at! - b.at!);
  writer.write(header(opts, content));
  const written = new Set<string>();
  const lastEnd = new Map<string, number>();
  let seq = 0;
  for (const [i, row] of rows.entries()) {
    const bytes = Buffer.byteLength(JSON.stringify(row.body));
    const shape = requestShape(row.body, bytes, hasher);
    const { response, answer } = loggedResponse(row.logged, hasher);
    // Without timestamps, order alone: each line starts after the one before it ended.
    const startedAtMs = timed ? row.at! - first : i;
    const assigned = inference.assign({ messages: shape.messages.map((m) => m.hash), session: row.session, startedAtMs, endedAtMs: timed ? startedAtMs : i + 0.5, answer, failed: false });
    if (content) {
      const c = requestContents(row.body, shape);
      if (c.tools !== null && !written.has(c.tools.hash)) {
        written.add(c.tools.hash);
        writer.write({ kind: 'tools', hash: c.tools.hash, tools: c.tools.tools });
      }
      for (const m of c.messages)
        if (!written.has(m.hash)) {
          written.add(m.hash);
          writer.write({ kind: 'content', hash: m.hash, message: m.message });
        }
    }
    // Untimed: every conversation starts at 0 and its rounds follow `thinkMs` apart.
    const previous = lastEnd.get(assigned.conversation);
    const startMs = timed ? startedAtMs : previous === undefined ? 0 : previous + thinkMs;
    lastEnd.set(assigned.conversation, startMs);
    seq += 1;
    const line: TraceRequest = {
      kind: 'request',
      seq,
      t: new Date((timed ? first : Date.now()) + startMs).toISOString(),
      start_ms: startMs,
      connection: null,
      conversation: assigned.conversation,
      round: assigned.round,
      think_ms: assigned.round === 1 ? null : timed ? assigned.thinkMs : thinkMs,
      path: '/v1/chat/completions',
      request: shape,
      response,
    };
    writer.write(line);
  }
  return { requests: seq, conversations: inference.count };
}

function importMooncake(opts: ImportOptions, writer: TraceFileWriter): ImportResult {
  const blockTokens = opts.blockTokens ?? 512;
  const rows = lines(opts.file).map(({ n, value }) => {
    const at = num(value.timestamp);
    const input = num(value.input_length);
    const output = num(value.output_length);
    const ids = value.hash_ids;
    if (at === null || input === null || output === null || !Array.isArray(ids) || !ids.every((x) => typeof x === 'number' || typeof x === 'string')) {
      throw new TraceError(`${opts.file}:${n}: a Mooncake line needs timestamp, input_length, output_length (numbers) and hash_ids (a list)`);
    }
    return { at, input, output, ids: ids.map(String) };
  });
  rows.sort((a, b) => a.at - b.at);
  const first = rows[0]?.at ?? 0;
  writer.write(header(opts, false));
  const hasher = new Hasher();
  rows.forEach((row, i) => {
    // Blocks of `blockTokens` tokens (4 characters each), the last one what remains of input_length.
    const chars = Math.max(1, Math.round(row.input * 4));
    const blockChars = blockTokens * 4;
    const segments =
      row.ids.length === 0
        ? [{ chars, hash: hasher.hash(`mooncake-${i}`) }]
        : row.ids.map((id, j) => ({ chars: j < row.ids.length - 1 ? blockChars : Math.max(0, chars - blockChars * (row.ids.length - 1)), hash: `block-${id}` }));
    const line: TraceRequest = {
      kind: 'request',
      seq: i + 1,
      t: new Date(Date.now() + row.at - first).toISOString(),
      start_ms: row.at - first,
      connection: null,
      conversation: `c${i + 1}`,
      round: 1,
      think_ms: null,
      path: '/v1/chat/completions',
      request: {
        model: null,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: Math.max(1, Math.round(row.output)),
        max_tokens_key: 'max_tokens',
        tool_choice: null,
        messages: [{ role: 'user', chars: segments.reduce((n, s) => n + s.chars, 0), hash: hasher.hash(row.ids.join(',') || `mooncake-${i}`), segments }],
        tools: null,
        extra: {},
        extra_keys: [],
        bytes: 0,
      },
      response: { ...unknownResponse(), completion_tokens: null },
    };
    writer.write(line);
  });
  return { requests: rows.length, conversations: rows.length };
}

/** Converts `opts.file` into a roundload trace at `opts.out`. @throws TraceError on bad input. */
export function importTrace(opts: ImportOptions): ImportResult {
  const writer = new TraceFileWriter(opts.out);
  try {
    return opts.format === 'openai' ? importOpenAi(opts, writer) : importMooncake(opts, writer);
  } finally {
    writer.close();
  }
}

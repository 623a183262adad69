// A chat-completions server for tests that streams in SGLang's exact format (serving_chat.py, as described in
// /work/shared/reference/sglang-detailed.md §3) for a reasoning model with a tool-call parser: explicit nulls in
// every delta, the role chunk with `content: ""` at the first token, reasoning then content then tool calls (the
// first fragment of a call with `call_<24 hex>` and its name, later ones `id: null, name: null`), a separate finish
// chunk, then the usage chunk with `choices: []` and `reasoning_tokens`, then `[DONE]`. It records what it
// receives (headers, body) and when it wrote each token (performance.now(), the same clock as the client's in
// this process). Listens on 127.0.0.1 port 0; closed after the test.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createHash } from 'node:crypto';
import type { TestContext } from 'node:test';

/** One tool call the model makes: its name (null: the parser dropped it, sglang#35563) and its arguments in pieces. */
export interface ScriptedCall {
  name: string | null;
  /** Fragments of the arguments JSON, one stream event each. */
  arguments: readonly string[];
}

/** What the server answers one request with. Every piece is one stream event (one token, as SGLang streams
 * when it keeps up). */
export interface ScriptedAnswer {
  reasoning?: readonly string[];
  content?: readonly string[];
  toolCalls?: readonly ScriptedCall[];
  /** @default `tool_calls` with calls, else `stop` */
  finishReason?: 'stop' | 'length' | 'tool_calls';
  /** Before the first token (queueing and prefill). @default 0 */
  firstTokenDelayMs?: number;
  /** Between two token events. @default 0 */
  tokenIntervalMs?: number;
  /** The usage chunk: `sglang` puts `reasoning_tokens` at the top level (SGLang 2026), `openai` under
   * `completion_tokens_details`, `none` reports no reasoning count; false: no usage chunk (`include_usage`
   * is then ignored). Counts default to one token per piece (a tool call's name one more). @default {} */
  usage?: false | { spelling?: 'sglang' | 'openai' | 'none'; reasoningTokens?: number; completionTokens?: number; promptTokens?: number };
}

/** A token event as written, and when (performance.now()). */
export interface Written {
  kind: 'reasoning' | 'content' | 'tool';
  text: string;
  atMs: number;
}

export interface ReceivedRequest {
  /** 1 for the first chat request the server got, 2 for the next… */
  n: number;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The conversation id from the task message (`Task a0-c1: …`), or null (a preflight, a canary). */
  conversation: string | null;
  /** What it sent back. */
  answer: ScriptedAnswer;
  written: Written[];
  /** The usage chunk it sent (null: none). */
  usage: Record<string, unknown> | null;
}

export interface SglangServer {
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** The fields every chunk of one response repeats; `id` is a 32-hex request id, as many SGLang builds send. */
interface Envelope {
  id: string;
  created: number;
  model: string;
}

const EMPTY_DELTA = { role: null, content: null, reasoning_content: null, tool_calls: null };

function chunk(env: Envelope, delta: Record<string, unknown>, finishReason: string | null = null, matchedStop: number | null = null): string {
  const choice = { index: 0, delta: { ...EMPTY_DELTA, ...delta }, logprobs: null, finish_reason: finishReason, matched_stop: matchedStop };
  return `data: ${JSON.stringify({ id: env.id, object: 'chat.completion.chunk', created: env.created, model: env.model, choices: [choice], usage: null })}\n\n`;
}

function hex(seed: string, length: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, length);
}

function conversationOf(body: Record<string, unknown>): string | null {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return null;
  for (const m of messages) {
    const content = (m as { content?: unknown }).content;
    const match = typeof content === 'string' ? /^Task (a\d+-c\d+):/.exec(content) : null;
    if (match !== null) return match[1]!;
  }
  return null;
}

/** Starts the server; `answer` scripts each chat request (`/v1/chat/completions`); `/v1/models` lists `model`. */
export async function sglangServer(
  t: TestContext,
  answer: (req: { n: number; body: Record<string, unknown>; conversation: string | null }) => ScriptedAnswer,
  options: { model?: string } = {},
): Promise<SglangServer> {
  const model = options.model ?? 'deepseek-v4-flash';
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      if (req.method === 'GET' && (req.url ?? '').endsWith('/v1/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', owned_by: 'sglang' }] }));
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'error', message: 'request body is not JSON', type: 'BadRequestError', param: null, code: 400 }));
        return;
      }
      const n = requests.length + 1;
      const conversation = conversationOf(body);
      const script = answer({ n, body, conversation });
      const received: ReceivedRequest = { n, headers: req.headers, body, conversation, answer: script, written: [], usage: null };
      requests.push(received);
      stream(body, script, received, res);
    });
  });

  function stream(body: Record<string, unknown>, script: ScriptedAnswer, received: ReceivedRequest, res: ServerResponse): void {
    const env: Envelope = { id: hex(`req-${received.n}`, 32), created: Math.floor(Date.now() / 1000), model: typeof body['model'] === 'string' ? body['model'] : model };
    // Token events in SGLang's order: reasoning, then content, then the tool calls.
    const events: { kind: Written['kind']; text: string; delta: Record<string, unknown> }[] = [];
    for (const text of script.reasoning ?? []) events.push({ kind: 'reasoning', text, delta: { reasoning_content: text } });
    for (const text of script.content ?? []) events.push({ kind: 'content', text, delta: { content: text } });
    (script.toolCalls ?? []).forEach((call, index) => {
      const [first = '', ...rest] = call.arguments;
      events.push({
        kind: 'tool',
        text: `${call.name ?? ''}${first}`,
        delta: { tool_calls: [{ id: `call_${hex(`call-${received.n}-${index}`, 24)}`, index, type: 'function', function: { name: call.name, arguments: first } }] },
      });
      for (const piece of rest) events.push({ kind: 'tool', text: piece, delta: { tool_calls: [{ id: null, index, type: 'function', function: { name: null, arguments: piece } }] } });
    });
    const calls = script.toolCalls ?? [];
    const finish = script.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const gone = (): boolean => res.destroyed || res.writableEnded;
    let i = 0;
    const next = (): void => {
      if (gone()) return;
      const e = events[i];
      if (e === undefined) {
        end();
        return;
      }
      // SGLang sends the role chunk when the first output arrives, just before the first token's.
      const lead = i === 0 ? chunk(env, { role: 'assistant', content: '' }) : '';
      received.written.push({ kind: e.kind, text: e.text, atMs: performance.now() });
      res.write(lead + chunk(env, e.delta));
      i += 1;
      schedule(next, script.tokenIntervalMs ?? 0);
    };
    const end = (): void => {
      let out = chunk(env, {}, finish, finish === 'stop' ? 1 : null);
      const wantsUsage = (body['stream_options'] as { include_usage?: unknown } | undefined)?.include_usage === true;
      if (script.usage !== false && wantsUsage) {
        const u = script.usage ?? {};
        const reasoningTokens = u.reasoningTokens ?? (script.reasoning ?? []).length;
        const completionTokens = u.completionTokens ?? events.length + calls.length;
        const promptTokens = u.promptTokens ?? Math.ceil(JSON.stringify(body['messages'] ?? []).length / 4);
        const usage: Record<string, unknown> = { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null };
        if ((u.spelling ?? 'sglang') === 'sglang') usage['reasoning_tokens'] = reasoningTokens;
        else if (u.spelling === 'openai') usage['completion_tokens_details'] = { reasoning_tokens: reasoningTokens };
        received.usage = usage;
        out += `data: ${JSON.stringify({ id: env.id, object: 'chat.completion.chunk', created: env.created, model: env.model, choices: [], usage })}\n\n`;
      }
      res.end(`${out}data: [DONE]\n\n`);
    };
    schedule(next, script.firstTokenDelayMs ?? 0);
  }

  function schedule(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    for (const timer of timers) clearTimeout(timer);
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.after(close);
  return { url: `http://127.0.0.1:${port}`, requests, close };
}

/** The assistant messages of a request body, as sent. */
export function assistantMessages(
  body: Record<string, unknown>,
): { content: string | null; reasoning_content?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[] {
  const messages = body['messages'];
  return Array.isArray(messages) ? ((messages as { role: string }[]).filter((m) => m.role === 'assistant') as never) : [];
}

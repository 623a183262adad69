// A chat server whose tokenizer is not roundload's estimate, standing in for llama.cpp's llama-server (not
// installable from Debian's packages here): a run of letters is one token and every other character but a
// space one token, so prose-like synthetic words come to about 6 characters a token and code to about 2.5.
// It reports usage in those tokens (a chat template of 3 tokens a message), answers a user message with a tool
// call and a tool result with text (a request that does not stream with JSON), and has llama.cpp's or vLLM's tokenize endpoint, or none.
import type { TestContext } from 'node:test';
import type { ServerResponse } from 'node:http';
import { chunk, fakeChat, sse, usageAndDone, type FakeChat, type FakeRequest } from './fake-chat.js';

/** The fake's token count of a text. */
export function fakeTokens(text: string): number {
  return (text.match(/[A-Za-z]+|[^\sA-Za-z]/g) ?? []).length;
}

const TEMPLATE_TOKENS = 3;

interface Message {
  role?: string;
  content?: unknown;
  tool_calls?: { function?: { name?: string; arguments?: string } }[];
}

/** The prompt tokens the fake reports for a chat body: template, contents, tool calls, tools. */
export function fakePromptTokens(body: Record<string, unknown>): number {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Message[];
  let tokens = TEMPLATE_TOKENS + (Array.isArray(body.tools) ? fakeTokens(JSON.stringify(body.tools)) : 0);
  for (const m of messages) {
    tokens += TEMPLATE_TOKENS + (typeof m.content === 'string' ? fakeTokens(m.content) : 0);
    for (const c of m.tool_calls ?? []) tokens += fakeTokens(`${c.function?.name ?? ''} ${c.function?.arguments ?? ''}`);
  }
  return tokens;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** `POST /tokenize` as llama.cpp (`{content}` → `{tokens}`) or vLLM (`{model, prompt}` → `{count, tokens}`). */
function tokenize(kind: 'llama.cpp' | 'vllm' | null, req: FakeRequest, res: ServerResponse): void {
  if (kind === null) return json(res, 404, { error: 'Not Found' });
  const text = kind === 'llama.cpp' ? req.body?.content : req.body?.prompt;
  if (typeof text !== 'string') return json(res, 400, { error: kind === 'llama.cpp' ? '"content" must be provided' : 'prompt: Field required' });
  const tokens = Array.from({ length: fakeTokens(text) }, (_, i) => i);
  json(res, 200, kind === 'llama.cpp' ? { tokens } : { count: tokens.length, max_model_len: 32768, tokens });
}

/** A user message last: a `read_file` tool call; otherwise a short text. Usage in the fake's tokens. */
function answer(req: FakeRequest, res: ServerResponse): void {
  const body = req.body ?? {};
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Message[];
  const prompt = fakePromptTokens(body);
  if (body.stream !== true)
    return json(res, 200, {
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'length' }],
      usage: { prompt_tokens: prompt, completion_tokens: 1 },
    });
  if (messages.at(-1)?.role === 'user') {
    const args = `{"path":"src/parser_${req.n % 7}.ts"}`;
    const call = { index: 0, id: `call_${req.n}`, type: 'function', function: { name: 'read_file', arguments: args } };
    return sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ tool_calls: [call] }) + chunk({}, 'tool_calls') + usageAndDone(prompt, fakeTokens(`read_file ${args}`)));
  }
  const text = 'Found it: the loop in parse() stops one line early; fix the bound.';
  sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ content: text }) + chunk({}, 'stop') + usageAndDone(prompt, fakeTokens(text)));
}

/** The fake, on 127.0.0.1 port 0, closed after the test. */
export function tokenizingChat(t: TestContext, kind: 'llama.cpp' | 'vllm' | null): Promise<FakeChat> {
  return fakeChat(t, (req, res) => {
    if (req.url.endsWith('/tokenize')) return tokenize(kind, req, res);
    if (req.url.endsWith('/chat/completions') && req.method === 'POST') return answer(req, res);
    res.writeHead(404);
    res.end();
  });
}

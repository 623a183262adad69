// A chat server with llama.cpp's own tokenizer and chat template (tiny-tools.gguf through node-llama-cpp's
// prebuilt binary), with the endpoints of one server kind: llama-server's /tokenize {content} → {tokens} and
// /apply-template {messages, tools} → {prompt}; vLLM's /tokenize {model, prompt} or {model, messages, tools}
// → {count, max_model_len, tokens}; or none. Chat completions (streamed, or whole when not) report the rendered
// prompt's tokens as usage.prompt_tokens.
import type { TestContext } from 'node:test';
import type { ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLlama, JinjaTemplateChatWrapper, type ChatHistoryItem, type ChatModelFunctionCall, type ChatModelFunctions, type LlamaModel } from 'node-llama-cpp';
import { chunk, fakeChat, sse, usageAndDone, type FakeChat } from './fake-chat.js';

/** The repository's root: the nearest folder above this file with a package.json (from source or dist/). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** The model: ROUNDLOAD_TEST_GGUF, else `../shared/models/tiny-tools.gguf` beside the repository. */
export const GGUF = process.env.ROUNDLOAD_TEST_GGUF ?? resolve(repoRoot(), '..', 'shared/models/tiny-tools.gguf');

/** Why a test on the model cannot run here (false: it can). */
export const ggufSkip: string | false = existsSync(GGUF) ? false : `${GGUF} is not on this machine (set ROUNDLOAD_TEST_GGUF, or put ../shared/models/tiny-tools.gguf beside the repository)`;

/** Which tokenize endpoints the server has, as the servers named have them. */
export type GgufEndpoints = 'llama.cpp' | 'vllm' | 'none';

interface Message {
  role?: string;
  content?: unknown;
  tool_calls?: { function?: { name?: string; arguments?: string } }[];
}

/** Loads the model once (per test file). */
export async function loadGguf(): Promise<LlamaModel> {
  const llama = await getLlama({ gpu: false, build: 'never' });
  return llama.loadModel({ modelPath: GGUF });
}

/** OpenAI messages and tools as the model's Jinja template renders them (generation prompt included). */
function render(model: LlamaModel, body: Record<string, unknown>): string {
  const template = model.fileInfo.metadata.tokenizer.chat_template;
  if (typeof template !== 'string') throw new Error('no chat template');
  const history: ChatHistoryItem[] = [];
  for (const m of (Array.isArray(body.messages) ? body.messages : []) as Message[]) {
    const text = typeof m.content === 'string' ? m.content : '';
    const last = history.at(-1);
    if (m.role === 'system') history.push({ type: 'system', text });
    else if (m.role === 'user') history.push({ type: 'user', text });
    else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({ type: 'functionCall' as const, name: c.function?.name ?? '', params: JSON.parse(c.function?.arguments || '{}') as unknown, result: '' }));
      history.push({ type: 'model', response: [...(text === '' ? [] : [text]), ...calls] });
    } else if (m.role === 'tool' && last?.type === 'model') {
      const call = last.response.find((r): r is ChatModelFunctionCall => typeof r !== 'string' && r.type === 'functionCall' && r.result === '');
      if (call !== undefined) call.result = text;
    }
  }
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const t of (Array.isArray(body.tools) ? body.tools : []) as { function: { name: string; description?: string; parameters?: unknown } }[])
    functions[t.function.name] = { description: t.function.description ?? '', params: t.function.parameters as never };
  const wrapper = new JinjaTemplateChatWrapper({ template });
  return wrapper.generateContextState({ chatHistory: [...history, { type: 'model', response: [] }], availableFunctions: functions }).contextText.toString();
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** `/tokenize` and `/apply-template` as `kind`'s server has them; false when the path is not one of them. */
function tokenizeEndpoint(kind: GgufEndpoints, model: LlamaModel, url: string, body: Record<string, unknown>, res: ServerResponse): boolean {
  const tokens = (text: string): number[] => [...model.tokenize(text, true)];
  if (url.endsWith('/apply-template')) {
    if (kind === 'llama.cpp') json(res, 200, { prompt: render(model, body) });
    else json(res, 404, { error: 'Not Found' });
    return true;
  }
  if (!url.endsWith('/tokenize')) return false;
  if (kind === 'none') json(res, 404, { error: 'Not Found' });
  else if (kind === 'llama.cpp') {
    if (typeof body.content === 'string') json(res, 200, { tokens: tokens(body.content) });
    else json(res, 400, { error: 'content' });
  } else {
    // vLLM: a prompt, or messages rendered with the chat template (generation prompt added by default).
    const ids = typeof body.prompt === 'string' ? tokens(body.prompt) : Array.isArray(body.messages) ? tokens(render(model, body)) : null;
    if (ids === null) json(res, 400, { object: 'error', message: 'prompt or messages: Field required', type: 'BadRequestError', code: 400 });
    else json(res, 200, { count: ids.length, max_model_len: 131072, tokens: ids });
  }
  return true;
}

/** The server on 127.0.0.1 port 0, closed after the test. */
export function ggufChat(t: TestContext, model: LlamaModel, endpoints: GgufEndpoints = 'llama.cpp'): Promise<FakeChat> {
  const tokens = (text: string): number => model.tokenize(text, true).length;
  return fakeChat(t, (req, res) => {
    const body = req.body ?? {};
    if (tokenizeEndpoint(endpoints, model, req.url, body, res)) return;
    if (!req.url.endsWith('/chat/completions')) return json(res, 404, { error: 'Not Found' });
    const prompt = tokens(render(model, body));
    if (body.stream !== true) {
      const usage = { prompt_tokens: prompt, completion_tokens: 1, total_tokens: prompt + 1 };
      return json(res, 200, { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Found' }, finish_reason: 'length' }], usage });
    }
    const messages = (Array.isArray(body.messages) ? body.messages : []) as Message[];
    if (messages.at(-1)?.role === 'user' && Array.isArray(body.tools)) {
      const call = { index: 0, id: `call_${req.n}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/parser_${req.n % 7}.ts"}` } };
      // Usage as the model would count its answer: the tool call as Qwen2.5 writes it.
      const written = `<tool_call>\n{"name": "read_file", "arguments": ${call.function.arguments}}\n</tool_call>`;
      return sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ tool_calls: [call] }) + chunk({}, 'tool_calls') + usageAndDone(prompt, tokens(written)));
    }
    const text = 'Found it: the loop stops one line early.';
    sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ content: text }) + chunk({}, 'stop') + usageAndDone(prompt, tokens(text)));
  });
}

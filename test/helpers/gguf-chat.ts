// A chat server with llama.cpp's own tokenizer and chat template (tiny-tools.gguf through node-llama-cpp's
// prebuilt binary), with the endpoints of one server kind: llama-server's /tokenize {content} → {tokens} and
// /apply-template {messages, tools} → {prompt}; vLLM's /tokenize {model, prompt} or {model, messages, tools}
// → {count, max_model_len, tokens}; or none. Chat completions (streamed, or whole when not) report the rendered
// prompt's tokens as usage.prompt_tokens. node-llama-cpp is an optional install (`npm run setup:llama`), not a
// devDependency: without it the tests on the model skip and say how to run them.
import type { TestContext } from 'node:test';
import type { ServerResponse } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './root.js';
import { chunk, fakeChat, sse, usageAndDone, type FakeChat } from './fake-chat.js';

/** The model: ROUNDLOAD_TEST_GGUF, else `../shared/models/tiny-tools.gguf` beside the repository. */
export const GGUF = process.env.ROUNDLOAD_TEST_GGUF ?? resolve(ROOT, '..', 'shared/models/tiny-tools.gguf');

/** Where node-llama-cpp is: the folder `npm run setup:llama` installs it into (scripts/setup-llama.mjs), or the
 * project's own node_modules (an `npm i --no-save node-llama-cpp@3.21.1`); null when in neither. */
const LLAMA_PACKAGE =
  [join(ROOT, 'node_modules/.cache/roundload-llama/node_modules/node-llama-cpp'), join(ROOT, 'node_modules/node-llama-cpp')].find((dir) => existsSync(join(dir, 'package.json'))) ?? null;

/** Why a test on the model cannot run here (false: it can). In CI (`CI` set) a missing node-llama-cpp is a
 * failure, not a skip: .ci/run installs it (a test CI must run never skips there silently). */
export const ggufSkip: string | false = !existsSync(GGUF)
  ? `${GGUF} is not on this machine (set ROUNDLOAD_TEST_GGUF, or put ../shared/models/tiny-tools.gguf beside the repository)`
  : LLAMA_PACKAGE === null && (process.env.CI ?? '') === ''
    ? "node-llama-cpp (llama.cpp's tokenizer and chat templates) is not installed: it is an optional test dependency, not in `npm ci`; `npm run setup:llama` installs it (about 85 MB, into node_modules/.cache/roundload-llama; again after each `npm ci`) and these tests run"
    : false;

/** What the tests use of node-llama-cpp's model (its own types stay out: the package is optional). */
export interface LlamaModel {
  tokenize(text: string, specialTokens?: boolean): readonly number[];
  readonly fileInfo: { metadata: { tokenizer: { chat_template?: unknown } } };
  dispose(): Promise<void>;
}

interface FunctionCall {
  type: 'functionCall';
  name: string;
  params: unknown;
  result: string;
}

type HistoryItem = { type: 'system' | 'user'; text: string } | { type: 'model'; response: (string | FunctionCall)[] };

interface LlamaModule {
  getLlama(options: { gpu: false; build: 'never' }): Promise<{ loadModel(options: { modelPath: string }): Promise<LlamaModel> }>;
  JinjaTemplateChatWrapper: new (options: { template: string }) => {
    generateContextState(state: { chatHistory: HistoryItem[]; availableFunctions: Record<string, { description: string; params: unknown }> }): { contextText: { toString(): string } };
  };
}

let llamaModule: LlamaModule | null = null;

/** node-llama-cpp, loaded once from where it was found. */
async function llamaCpp(): Promise<LlamaModule> {
  if (llamaModule !== null) return llamaModule;
  if (LLAMA_PACKAGE === null) throw new Error('node-llama-cpp is not installed: `npm run setup:llama` (.ci/run runs it in CI)');
  const pkg = JSON.parse(readFileSync(join(LLAMA_PACKAGE, 'package.json'), 'utf8')) as { exports?: { '.'?: { import?: string } } };
  llamaModule = (await import(pathToFileURL(join(LLAMA_PACKAGE, pkg.exports?.['.']?.import ?? 'dist/index.js')).href)) as LlamaModule;
  return llamaModule;
}

/** Which tokenize endpoints the server has, as the servers named have them. */
export type GgufEndpoints = 'llama.cpp' | 'vllm' | 'none';

interface Message {
  role?: string;
  content?: unknown;
  tool_calls?: { function?: { name?: string; arguments?: string } }[];
}

/** Loads the model once (per test file). */
export async function loadGguf(): Promise<LlamaModel> {
  const llama = await (await llamaCpp()).getLlama({ gpu: false, build: 'never' });
  return llama.loadModel({ modelPath: GGUF });
}

/** OpenAI messages and tools as the model's Jinja template renders them (generation prompt included). */
function render(model: LlamaModel, body: Record<string, unknown>): string {
  const template = model.fileInfo.metadata.tokenizer.chat_template;
  if (typeof template !== 'string') throw new Error('no chat template');
  if (llamaModule === null) throw new Error('loadGguf() first');
  const history: HistoryItem[] = [];
  for (const m of (Array.isArray(body.messages) ? body.messages : []) as Message[]) {
    const text = typeof m.content === 'string' ? m.content : '';
    const last = history.at(-1);
    if (m.role === 'system') history.push({ type: 'system', text });
    else if (m.role === 'user') history.push({ type: 'user', text });
    else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({ type: 'functionCall' as const, name: c.function?.name ?? '', params: JSON.parse(c.function?.arguments || '{}') as unknown, result: '' }));
      history.push({ type: 'model', response: [...(text === '' ? [] : [text]), ...calls] });
    } else if (m.role === 'tool' && last?.type === 'model') {
      const call = last.response.find((r): r is FunctionCall => typeof r !== 'string' && r.type === 'functionCall' && r.result === '');
      if (call !== undefined) call.result = text;
    }
  }
  const functions: Record<string, { description: string; params: unknown }> = {};
  for (const t of (Array.isArray(body.tools) ? body.tools : []) as { function: { name: string; description?: string; parameters?: unknown } }[])
    functions[t.function.name] = { description: t.function.description ?? '', params: t.function.parameters };
  const wrapper = new llamaModule.JinjaTemplateChatWrapper({ template });
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

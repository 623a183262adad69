// A chat server with llama.cpp's own tokenizer and chat template (tiny-tools.gguf through node-llama-cpp's
// prebuilt binary): /tokenize {content} → {tokens} and /apply-template {messages, tools} → {prompt} as
// llama-server has them, and streamed chat completions whose usage.prompt_tokens is the rendered prompt's tokens.
import type { TestContext } from 'node:test';
import type { ServerResponse } from 'node:http';
import { getLlama, JinjaTemplateChatWrapper, type ChatHistoryItem, type ChatModelFunctionCall, type ChatModelFunctions, type LlamaModel } from 'node-llama-cpp';
import { chunk, fakeChat, sse, usageAndDone, type FakeChat } from './fake-chat.js';

export const GGUF = '/work/shared/models/tiny-tools.gguf';

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

/** The server on 127.0.0.1 port 0, closed after the test. */
export function ggufChat(t: TestContext, model: LlamaModel): Promise<FakeChat> {
  const tokens = (text: string): number => model.tokenize(text, true).length;
  return fakeChat(t, (req, res) => {
    const body = req.body ?? {};
    if (req.url.endsWith('/tokenize')) return typeof body.content === 'string' ? json(res, 200, { tokens: model.tokenize(body.content, true) }) : json(res, 400, { error: 'content' });
    if (req.url.endsWith('/apply-template')) return json(res, 200, { prompt: render(model, body) });
    if (!req.url.endsWith('/chat/completions')) return json(res, 404, { error: 'Not Found' });
    const prompt = tokens(render(model, body));
    const messages = (Array.isArray(body.messages) ? body.messages : []) as Message[];
    if (messages.at(-1)?.role === 'user' && Array.isArray(body.tools)) {
      const call = { index: 0, id: `call_${req.n}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/parser_${req.n % 7}.ts"}` } };
      return sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ tool_calls: [call] }) + chunk({}, 'tool_calls') + usageAndDone(prompt, 12));
    }
    sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Found it: the loop stops one line early.' }) + chunk({}, 'stop') + usageAndDone(prompt, 10));
  });
}

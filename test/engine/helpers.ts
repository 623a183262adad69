// Test helpers for the embedded deployment: start one with chosen settings (closed after the test; PD unless
// `topology: single`), and a small streaming chat client that timestamps every SSE event as it arrives.
import type { TestContext } from 'node:test';
import { after } from 'node:test';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { engineSchema } from '../../src/config/index.js';
import { startEngine, type EngineHandle } from '../../src/engine/index.js';

export type EngineInput = Parameters<typeof engineSchema.parse>[0];

/** Starts an engine on 127.0.0.1:0, closed when the test (or, without `t`, the file) ends. */
export async function engine(settings: EngineInput = {}, t?: TestContext, logDir: string | null = null): Promise<EngineHandle> {
  const handle = await startEngine({ settings: engineSchema.parse(settings), logDir });
  if (t === undefined) after(() => handle.close());
  else t.after(() => handle.close());
  return handle;
}

export interface ToolCallFragment {
  index: number;
  id?: string;
  type?: string;
  function: { name?: string; arguments?: string };
}

export interface ToolCallWire {
  id: string | null;
  index: number;
  type: string;
  function: { name: string | null; arguments: string };
}

export interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role: string | null; content: string | null; reasoning_content: string | null; tool_calls: ToolCallWire[] | null };
    logprobs: null;
    finish_reason: string | null;
    matched_stop: number | null;
  }[];
  usage: Usage | null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number } | null;
  reasoning_tokens: number;
}

export interface StreamResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Data events in order, `[DONE]` as the string. */
  events: (Chunk | { error: ErrorBody } | '[DONE]')[];
  /** Arrival time (performance.now()) of each data event. */
  arrivalsMs: number[];
  /** SSE comment lines (without the leading `: `), and the index of the data event they preceded. */
  comments: { text: string; beforeEvent: number }[];
  content: string;
  reasoning: string;
  finishReason: string | null;
  usage: Usage | null;
  toolCalls: { id: string; name: string; arguments: string }[];
}

export const USER = (text: string): { role: string; content: string } => ({ role: 'user', content: text });

/** Posts a streaming chat request and reads it to the end (or until `stopAfter` says stop, then aborts). */
export async function streamChat(url: string, body: Record<string, unknown>, stopAfter?: (events: number) => boolean): Promise<StreamResult> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'deepseek-v4-flash', stream: true, stream_options: { include_usage: true }, ...body }),
  });
  const out: StreamResult = { status: res.statusCode, headers: res.headers, events: [], arrivalsMs: [], comments: [], content: '', reasoning: '', finishReason: null, usage: null, toolCalls: [] };
  let buffer = '';
  for await (const piece of res.body) {
    const now = performance.now();
    buffer += (piece as Buffer).toString('utf8');
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) out.comments.push({ text: line.slice(1).trim(), beforeEvent: out.events.length });
        else if (line.startsWith('data: ')) {
          const data = line.slice(6);
          out.events.push(data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Chunk | { error: ErrorBody }));
          out.arrivalsMs.push(now);
        }
      }
    }
    if (stopAfter?.(out.events.length) === true) {
      res.body.destroy();
      return out;
    }
  }
  for (const ev of out.events) {
    if (ev === '[DONE]' || 'error' in ev) continue;
    if (ev.usage !== null) out.usage = ev.usage;
    const choice = ev.choices[0];
    if (choice === undefined || choice.index !== 0) continue;
    if (choice.finish_reason !== null) out.finishReason = choice.finish_reason;
    out.content += choice.delta.content ?? '';
    out.reasoning += choice.delta.reasoning_content ?? '';
    for (const f of choice.delta.tool_calls ?? []) {
      const call = (out.toolCalls[f.index] ??= { id: '', name: '', arguments: '' });
      if (f.id !== null) call.id = f.id;
      if (f.function.name !== null) call.name = f.function.name;
      call.arguments += f.function.arguments;
    }
  }
  return out;
}

/** Posts any JSON (or raw text) to a path and returns status and parsed body. */
export async function postJson(
  url: string,
  path: string,
  body: string,
  contentType = 'application/json',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: unknown }> {
  const res = await request(`${url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.statusCode, headers: res.headers, json: await res.body.json() };
}

/** SGLang's flat error body. */
export interface ErrorBody {
  object: string;
  message: string;
  type: string;
  param: string | null;
  code: number;
}

/** The value of a series in an exposition, matched by name and every label given (others may be present). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = line.slice(name.length).startsWith('{') ? line.slice(name.length + 1, line.indexOf('}')) : '';
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

/** The deployment's server of that name. */
export function server(e: EngineHandle, name: 'router' | 'prefill' | 'decode' | 'engine'): { url: string; metricsUrl: string; logFile: string | null } {
  const s = e.servers.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no ${name} server in ${e.servers.map((x) => x.name).join(', ')}`);
  return s;
}

/** The text of a server's /metrics. */
export async function metricsOf(e: EngineHandle, name: 'router' | 'prefill' | 'decode' | 'engine'): Promise<string> {
  const res = await request(server(e, name).metricsUrl);
  return res.body.text();
}

export async function getText(url: string, path: string): Promise<{ status: number; text: string }> {
  const res = await request(`${url}${path}`);
  return { status: res.statusCode, text: await res.body.text() };
}

/** Waits until `check` holds, polling every 10 ms; fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' }, start_line: { type: 'integer' }, max_lines: { type: 'number' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'run_command',
      description: 'Run a shell command',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string' },
          background: { type: 'boolean' },
          env: { type: 'object', properties: { CI: { type: 'string' } } },
          args: { type: 'array', items: { type: 'string' } },
          mode: { enum: ['fast', 'full'] },
          weird: { format: 'date-time' },
        },
      },
    },
  },
];

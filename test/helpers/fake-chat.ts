// A scripted chat-completions server for tests: each POST gets what `answer` writes, so a test can send
// exactly the bytes a misbehaving server (or proxy) sends. Listens on 127.0.0.1 port 0; closes after the test.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TestContext } from 'node:test';

export interface FakeRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (null when none or not JSON). */
  body: Record<string, unknown> | null;
  raw: string;
  /** 1 for the first POST the server got, 2 for the next… */
  n: number;
}

export interface FakeChat {
  url: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** A chat-completions chunk with one choice (index 0) whose delta is `delta`. */
export function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/** A usage chunk (`choices: []`) and `[DONE]`. */
export function usageAndDone(prompt: number, completion: number, details: unknown = null): string {
  return `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: details } })}\n\ndata: [DONE]\n\n`;
}

/** Writes an SSE answer: 200, text/event-stream, the given text. */
export function sse(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(text);
}

/** A plain content answer ("ok"), with usage unless told not to. */
export function okAnswer(res: ServerResponse, usage = true): void {
  sse(res, chunk({ role: 'assistant', content: '' }) + chunk({ content: 'ok' }) + chunk({}, 'stop') + (usage ? usageAndDone(10, 1) : 'data: [DONE]\n\n'));
}

export async function fakeChat(t: TestContext, answer: (req: FakeRequest, res: ServerResponse) => void, options: { models?: string[] | null } = {}): Promise<FakeChat> {
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      if (req.method === 'GET' && (req.url ?? '').endsWith('/models') && options.models !== null) {
        const ids = options.models ?? ['m'];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) }));
        return;
      }
      let body: Record<string, unknown> | null;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        body = null;
      }
      const r: FakeRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw, n: requests.length + 1 };
      requests.push(r);
      answer(r, res);
    });
  });
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
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.after(close);
  return { url: `http://127.0.0.1:${port}`, requests, close };
}

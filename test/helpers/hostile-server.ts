// A server that misbehaves on purpose, for the tests of what reaches a terminal: every text it sends (error
// bodies, SSE error events, /v1/models ids, /metrics label values, header values) carries terminal controls
// (a window title, an OSC 52 clipboard write, a clear screen, C1 controls) and line breaks that would forge a
// line of roundload's output.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { hostileText } from './hostile-text.js';

export interface HostileServerOptions {
  /** The preflight (the first chat request) fails with an HTTP 400 carrying hostile text. @default false */
  failPreflight?: boolean;
}

/** Starts the server on 127.0.0.1, port 0; closed when the test ends. Requests after the preflight alternate
 * between an HTTP 500 with a hostile JSON error and a stream that ends in a hostile SSE error event. */
export async function hostileServer(t: TestContext, options: HostileServerOptions = {}): Promise<{ url: string; chats: () => number }> {
  let chats = 0;
  const sseOk = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-hostile': hostileText('header').replace(/[\r\n\x00-\x08\x0a-\x1f\x7f\u0100-\uffff]/g, '') });
    res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] })}\n\n`);
    res.write(
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data: [
              { id: hostileText('model'), object: 'model' },
              { id: hostileText('second-model'), object: 'model' },
            ],
          }),
        );
        return;
      }
      if (path === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        const label = hostileText('label').replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
        res.end(
          [
            '# HELP sglang:num_running_reqs running',
            '# TYPE sglang:num_running_reqs gauge',
            `sglang:num_running_reqs{model_name="${label}"} 3`,
            '# TYPE sglang:num_queue_reqs gauge',
            `sglang:num_queue_reqs{model_name="${label}"} 0`,
            '',
          ].join('\n'),
        );
        return;
      }
      chats += 1;
      if (chats === 1 && options.failPreflight !== true) return sseOk(res);
      if (chats % 2 === 1 && chats > 1) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ error: { message: hostileText('sse-error'), type: hostileText('sse-type'), code: 500 } })}\n\n`);
        return;
      }
      res.writeHead(chats === 1 ? 400 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'error', message: hostileText('http-error'), type: 'BadRequestError', code: 400 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, chats: () => chats };
}

// The engine's HTTP face on node:http: routing, body reading, OpenAI-style errors, and keep-alive settings
// long enough that agents reuse their sockets between rounds.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { handleChat } from './chat.js';
import { renderExposition } from './metrics.js';
import { BadRequest, parseChatRequest } from './protocol.js';
import type { EngineState } from './state.js';

/** Largest request body accepted; long agent conversations are big, but not this big. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Above Node's 5 s default so agents thinking between rounds keep their connection (clients default to 60 s). */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

function sendError(state: EngineState, res: ServerResponse, status: number, code: string, message: string, param: string | null = null): void {
  if (status < 500) state.rejected += 1;
  const body = JSON.stringify({ error: { message, type: status < 500 ? 'invalid_request_error' : 'server_error', param, code } });
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** Reads the whole body as UTF-8; resolves null (after answering 413) when it is too large. */
function readBody(state: EngineState, req: IncomingMessage, res: ServerResponse): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    req.on('data', (data: Buffer) => {
      if (done) return;
      bytes += data.length;
      if (bytes > MAX_BODY_BYTES) {
        done = true;
        // Close the connection: the rest of the body would otherwise be parsed as the next request.
        res.setHeader('connection', 'close');
        sendError(state, res, 413, 'payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`);
        resolve(null);
        return;
      }
      chunks.push(data);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    // A client gone before sending its body: nothing to answer.
    req.on('close', () => {
      if (done) return;
      done = true;
      resolve(null);
    });
  });
}

async function chatCompletions(state: EngineState, req: IncomingMessage, res: ServerResponse, arrivedAtMs: number): Promise<void> {
  const raw = await readBody(state, req, res);
  if (raw === null || res.destroyed) return;
  let request;
  try {
    request = parseChatRequest(raw);
  } catch (err) {
    if (!(err instanceof BadRequest)) throw err;
    sendError(state, res, 400, err.param === null ? 'invalid_json' : 'invalid_request', err.message, err.param);
    return;
  }
  state.requests += 1;
  const requestId = `chatcmpl-${randomBytes(12).toString('hex')}`;
  // A fault may answer the request itself (an HTTP error), never answer it (a hang), or stand in front of it.
  const out = state.faults.respond(req, res, request, requestId);
  if (out !== null) handleChat(state, request, out, arrivedAtMs, requestId);
}

function route(state: EngineState, req: IncomingMessage, res: ServerResponse): void {
  const arrivedAtMs = performance.now();
  // close_idle may drop the socket of a request arriving on a connection it counts as closed.
  if (state.faults.arrive(req, res)) return;
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const method = req.method ?? 'GET';
  const allow = (methods: string): boolean => {
    if (methods.split(',').includes(method)) return true;
    res.setHeader('allow', methods);
    sendError(state, res, 405, 'method_not_allowed', `${method} is not allowed on ${path}; use ${methods}`);
    return false;
  };
  switch (path) {
    case '/health':
      if (allow('GET,HEAD')) {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('ok');
      }
      return;
    case '/v1/models':
      if (allow('GET')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: state.modelName, object: 'model', created: 0, owned_by: 'roundload' }] }));
      }
      return;
    case '/metrics':
      if (allow('GET')) {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(renderExposition(state.metricFamilies(), { model_name: state.modelName }));
      }
      return;
    case '/v1/chat/completions':
      if (allow('POST')) {
        chatCompletions(state, req, res, arrivedAtMs).catch((err: unknown) => {
          if (!res.headersSent) sendError(state, res, 500, 'internal_error', `engine error: ${(err as Error).message}`);
          else res.destroy();
        });
      }
      return;
    default:
      sendError(state, res, 404, 'not_found', `no route ${method} ${path}`);
  }
}

export function createEngineServer(state: EngineState): Server {
  const server = createServer((req, res) => route(state, req, res));
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Must exceed keepAliveTimeout, or Node may cut an idle kept-alive socket as a slow request.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return server;
}

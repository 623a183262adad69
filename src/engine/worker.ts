// One SGLang server's HTTP face on node:http, as uvicorn and FastAPI answer: routing (`/health`, `/v1/models`,
// `/v1/models/{id}`, `/metrics`, `/v1/chat/completions`), FastAPI's `{"detail": …}` for unknown routes, SGLang's
// flat error body for 400s, uvicorn's 5 s idle keep-alive with no `Keep-Alive` header, and uvicorn's access lines
// in the server's log. The role (unified, prefill, decode) decides what a chat request does.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { handleDecodeChat, handlePrefillChat, handleUnifiedChat, prepareChat } from './chat.js';
import type { FaultInjector, PdFault } from './faults.js';
import { handleHealth } from './health.js';
import { renderExposition } from './metrics.js';
import { BadRequest, clientRequestId, parseChatRequest, type ChatRequest } from './protocol.js';
import type { ServerState } from './state.js';
import { tokenizeAnswer } from './tokenize.js';
import { errorBody, modelCard } from './wire.js';

/** Largest request body accepted; long agent conversations are big, but not this big. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** The header the PD router hands a request's PD fault to the servers in (JSON). */
export const FAULT_HEADER = 'x-roundload-fault';

export interface WorkerServer {
  readonly server: Server;
  /** Ends held health checks (the scheduler and sockets are stopped by the caller). */
  close(): void;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sendError(state: ServerState, res: ServerResponse, status: number, message: string, type: string): void {
  if (status < 500) state.rejected += 1;
  sendJson(res, status, errorBody(message, type, status));
}

/** Reads the whole body as UTF-8; resolves null (after answering 413) when it is too large. */
export function readBody(req: IncomingMessage, tooLarge: () => void): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    req.on('data', (data: Buffer) => {
      if (done) return;
      bytes += data.length;
      if (bytes > MAX_BODY_BYTES) {
        done = true;
        tooLarge();
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

function parseFault(value: string | string[] | undefined): PdFault | null {
  if (typeof value !== 'string') return null;
  try {
    return JSON.parse(value) as PdFault;
  } catch {
    return null;
  }
}

/** SGLang's `/tokenize`: the engine's token count of a text or of a chat request (see tokenize.ts). */
async function tokenize(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = await readBody(req, () => {
    res.setHeader('connection', 'close');
    sendError(state, res, 413, `request body exceeds ${MAX_BODY_BYTES} bytes`, 'BadRequestError');
  });
  if (raw === null || res.destroyed) return;
  const answer = tokenizeAnswer(raw, req.headers['content-type'], state.settings.context_length);
  sendJson(res, answer.status, answer.body);
}

async function chatCompletions(state: ServerState, faults: FaultInjector | null, req: IncomingMessage, res: ServerResponse, arrivedAtMs: number): Promise<void> {
  const raw = await readBody(req, () => {
    // Close the connection: the rest of the body would otherwise be parsed as the next request.
    res.setHeader('connection', 'close');
    sendError(state, res, 413, `request body exceeds ${MAX_BODY_BYTES} bytes`, 'BadRequestError');
  });
  if (raw === null || res.destroyed) return;
  let request: ChatRequest;
  let prepared;
  let requestId: string;
  try {
    request = parseChatRequest(raw, { contentType: req.headers['content-type'], contextLength: state.settings.context_length });
    // SGLang's id for the request: the body's `rid`, else the client's `X-Request-Id`, else its own 32-hex id.
    requestId = request.rid ?? clientRequestId(req.headers['x-request-id']) ?? randomBytes(16).toString('hex');
    if (state.role !== 'unified' && request.bootstrap === null) {
      throw new BadRequest(`This is a ${state.role} server of a disaggregated deployment: send requests through the router (bootstrap_host and bootstrap_room are missing).`);
    }
    prepared = prepareChat(state, request, requestId);
    // As SGLang's tokenizer manager logs a request it received (`--log-requests`), so a hang is found by its id.
    state.log.server(`Receive: obj=GenerateReqInput(rid='${requestId}', stream=${request.stream ? 'True' : 'False'})`);
  } catch (err) {
    if (!(err instanceof BadRequest)) throw err;
    sendError(state, res, 400, err.message, err.type);
    return;
  }
  // Its trace on this server (SGLang's --enable-trace), parented on the traceparent it came with.
  const trace =
    state.traces?.start(
      state.role === 'unified' ? 'engine' : state.role,
      req.headers.traceparent,
      { 'sglang.rid': requestId, 'gen_ai.usage.input_tokens': prepared.promptTokens },
      performance.timeOrigin + arrivedAtMs,
    ) ?? null;
  if (state.role === 'unified') {
    // A fault may answer the request itself (an HTTP error), never answer it (a hang), or stand in front of it.
    const decision = faults === null ? { out: res, pd: null } : faults.respond(req, res, request, requestId);
    if (decision.out !== null) handleUnifiedChat(state, request, prepared, decision.out, arrivedAtMs, trace);
    // An injected fault answered it (an error) or holds it (a hang): the trace says so and ends.
    else trace?.end('taken by an injected fault (engine.faults)');
    return;
  }
  const bootstrap = request.bootstrap!;
  const room = state.kv!.join(bootstrap.room);
  const fault = parseFault(req.headers[FAULT_HEADER]);
  const call = { state, request, prepared, room, fault, res, arrivedAtMs, trace };
  if (state.role === 'prefill') handlePrefillChat(call);
  else handleDecodeChat(call);
}

function route(state: ServerState, faults: FaultInjector | null, held: Set<NodeJS.Timeout>, req: IncomingMessage, res: ServerResponse): void {
  const arrivedAtMs = performance.now();
  // close_idle may drop the socket of a request arriving on a connection it counts as closed.
  if (faults !== null && faults.arrive(req, res)) return;
  // uvicorn sends no Keep-Alive hint; naming the connection ourselves stops Node from writing one.
  if (!res.hasHeader('connection') && !/close/i.test(req.headers.connection ?? '')) res.setHeader('connection', 'keep-alive');
  const client = `${req.socket.remoteAddress ?? '-'}:${req.socket.remotePort ?? 0}`;
  res.once('close', () => {
    if (res.headersSent) state.log.access(client, req.method ?? 'GET', req.url ?? '/', res.statusCode);
  });
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const method = req.method ?? 'GET';
  const allow = (methods: string): boolean => {
    if (methods.split(',').includes(method)) return true;
    res.setHeader('allow', methods);
    sendJson(res, 405, { detail: 'Method Not Allowed' });
    return false;
  };
  if (path === '/health' || path === '/health_generate') {
    if (allow('GET')) handleHealth(state, res, held);
    return;
  }
  if (path === '/v1/models') {
    if (allow('GET')) sendJson(res, 200, { object: 'list', data: [modelCard(state.modelName, state.settings.context_length)] });
    return;
  }
  if (path.startsWith('/v1/models/')) {
    if (!allow('GET')) return;
    const id = decodeURIComponent(path.slice('/v1/models/'.length));
    if (id === state.modelName) sendJson(res, 200, modelCard(state.modelName, state.settings.context_length));
    else sendJson(res, 404, { error: { message: `The model '${id}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
    return;
  }
  if (path === '/metrics' || path === '/metrics/') {
    if (allow('GET')) {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(renderExposition(state.metricFamilies()));
    }
    return;
  }
  if (path === '/tokenize' || path === '/v1/tokenize') {
    if (allow('POST')) void tokenize(state, req, res);
    return;
  }
  if (path === '/v1/chat/completions') {
    if (allow('POST')) {
      chatCompletions(state, faults, req, res, arrivedAtMs).catch((err: unknown) => {
        if (!res.headersSent) sendError(state, res, 500, `engine error: ${(err as Error).message}`, 'InternalServerError');
        else res.destroy();
      });
    }
    return;
  }
  sendJson(res, 404, { detail: 'Not Found' });
}

/** The HTTP server of one SGLang server (not yet listening). `faults` act here only when clients connect here. */
export function createWorkerServer(state: ServerState, faults: FaultInjector | null): WorkerServer {
  const held = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => route(state, faults, held, req, res));
  applyKeepAlive(server, state.settings.keep_alive_s);
  return {
    server,
    close: () => {
      for (const t of held) clearTimeout(t);
      held.clear();
    },
  };
}

/** Node's own idle close, kept only as a backstop well past ours (Node 20 waits a second longer than it is told). */
const NODE_BACKSTOP_MS = 5_000;

/**
 * uvicorn's idle keep-alive on a node:http server: a connection idle `keepAliveS` after its last response is
 * closed, exactly then (Node's own timer closes a second late and would advertise itself in a header).
 */
export function applyKeepAlive(server: Server, keepAliveS: number): void {
  const idleMs = keepAliveS * 1000;
  server.keepAliveTimeout = idleMs + NODE_BACKSTOP_MS;
  // Must exceed keepAliveTimeout, or Node may cut an idle kept-alive socket as a slow request.
  server.headersTimeout = Math.max(60_000, server.keepAliveTimeout + 1000);
  const idle = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const pending = idle.get(socket);
    if (pending !== undefined) clearTimeout(pending);
    idle.delete(socket);
    res.once('finish', () => {
      if (socket.destroyed) return;
      const timer = setTimeout(() => {
        idle.delete(socket);
        socket.destroy();
      }, idleMs);
      // A socket closed meanwhile makes this a no-op; the timer holds it for keep_alive_s at most.
      timer.unref();
      idle.set(socket, timer);
    });
  });
}

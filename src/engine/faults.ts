// Engine faults (`engine.faults`): hangs, stalls, drips, closes, HTTP errors, bad SSE lines and the keep-alive
// race on the wire, and the PD faults (a pinned or wedged KV transfer, a stalled bootstrap, a stalled decode)
// handed to the servers, each on the requests its selector picks, so every watchdog and monitor verdict can be
// made to fire. They act where clients connect: the unified server, or the PD router. Held (hung) responses and
// drip timers are tracked so close() ends them at once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { EngineFault, EngineFaultKind } from '../config/index.js';
import { Rng } from '../util/index.js';
import { hashHex } from './hash.js';
import { chunk, errorBody } from './wire.js';

/** What the chat handler writes a response through: a ServerResponse, or a faulted stream in front of one. */
export interface ChatResponse {
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
  writeHead(statusCode: number, headers: Record<string, string>): unknown;
  flushHeaders(): void;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  on(event: 'close', listener: () => void): unknown;
}

type CloseIdle = Extract<EngineFault, { kind: 'close_idle' }>;
type RequestFault = Exclude<EngineFault, CloseIdle>;
type StreamFault = Extract<RequestFault, { after_chunks: number }>;
type PdKind = Extract<RequestFault, { kind: 'inflight_pin' | 'kv_wedge' | 'bootstrap_stall' | 'decode_stall' }>;

/** A fault the router picked for a request, handed to the PD servers to act on. */
export type PdFault = 'inflight_pin' | 'kv_wedge' | 'bootstrap_stall' | { readonly kind: 'decode_stall'; readonly durationS: number | null };

/** What a fault needs to know of a chat request: whether it streams, and its round (1 + assistant messages). */
export interface FaultSubject {
  readonly stream: boolean;
  readonly messages: readonly { readonly role: string }[];
}

/** How a chat request goes on after the faults had their say. */
export interface FaultDecision {
  /** What to write the answer through (`res`, or a faulted stream), or null when a fault answered it (an HTTP
   * error) or never will (a hang). */
  readonly out: ChatResponse | null;
  /** A PD fault for the servers to act on. */
  readonly pd: PdFault | null;
}

const STREAM_KINDS: ReadonlySet<EngineFaultKind> = new Set(['stall_mid_stream', 'drip', 'close_mid_stream', 'end_mid_stream', 'malformed_sse', 'bad_tool_arguments']);
/** After a graceful close mid-stream, a socket the client does not close is destroyed this much later. */
const CLOSE_FALLBACK_MS = 1000;
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } as const;

interface SocketState {
  /** Requests that arrived on this socket. */
  requests: number;
  /** performance.now() when its last response finished; null while a request is in progress (or none yet). */
  idleSince: number | null;
  timer: NodeJS.Timeout | null;
}

function isStreamFault(fault: RequestFault): fault is StreamFault {
  return STREAM_KINDS.has(fault.kind);
}

function pdFault(fault: PdKind): PdFault {
  return fault.kind === 'decode_stall' ? { kind: 'decode_stall', durationS: fault.duration_s } : fault.kind;
}

/** SGLang's error type for a status (the Python exception class its handlers name). */
function errorType(status: number): string {
  if (status === 429) return 'TooManyRequestsError';
  if (status === 503) return 'ServiceUnavailableError';
  return status >= 500 ? 'InternalServerError' : 'BadRequestError';
}

/** A tool-call fragment whose arguments are cut-off JSON: the client must class it `invalid_tool_arguments`. */
function badToolCallEvent(): string {
  return chunk({ id: 'chatcmpl-fault', created: 0, model: 'fault' }, 0, { kind: 'tool', call: { index: 7, id: 'call_fault', name: 'read_file', arguments: '{"path": "src/ma' } });
}

export class FaultInjector {
  readonly #faults: readonly RequestFault[];
  readonly #closeIdle: CloseIdle | null;
  readonly #rngs: Rng[];
  /** Per request fault: requests that passed its conditions (for `every`), and times it fired (for `times`). */
  readonly #matched: number[];
  readonly #firedAt: number[];
  readonly #firedByKind: Partial<Record<EngineFaultKind, number>> = {};
  readonly #sockets = new WeakMap<Socket, SocketState>();
  readonly #requestIndex = new WeakMap<IncomingMessage, number>();
  /** Responses a fault keeps open (hung, stalled): destroyed by close(). */
  readonly #held = new Set<ServerResponse>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(faults: readonly EngineFault[], seed: number) {
    this.#faults = faults.filter((f): f is RequestFault => f.kind !== 'close_idle');
    this.#closeIdle = faults.find((f): f is CloseIdle => f.kind === 'close_idle') ?? null;
    this.#rngs = this.#faults.map((f, i) => Rng.fromHex(hashHex('engine-fault', String(seed), String(i), f.kind)));
    this.#matched = this.#faults.map(() => 0);
    this.#firedAt = this.#faults.map(() => 0);
  }

  /** Whether any fault picks chat requests (else a request needs no reading to pass). */
  get selectsRequests(): boolean {
    return this.#faults.length > 0;
  }

  /** Times each kind fired so far. */
  fired(): Readonly<Partial<Record<EngineFaultKind, number>>> {
    return { ...this.#firedByKind };
  }

  /**
   * Every HTTP request, as it arrives: counts it on its connection and applies `close_idle`.
   * @returns true when the fault took the request (its socket was dropped): nothing more may be done with it.
   */
  arrive(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.#faults.length === 0 && this.#closeIdle === null) return false;
    const socket = req.socket;
    let state = this.#sockets.get(socket);
    if (state === undefined) {
      const fresh: SocketState = { requests: 0, idleSince: null, timer: null };
      state = fresh;
      this.#sockets.set(socket, fresh);
      socket.once('close', () => this.#clearTimer(fresh));
    }
    this.#clearTimer(state);
    const idle = this.#closeIdle;
    if (idle !== null && idle.on === 'arrival' && state.idleSince !== null && performance.now() - state.idleSince >= idle.idle_ms) {
      // The server "had just closed" this idle socket as the client reused it: no answer, the socket drops.
      this.#count('close_idle');
      socket.destroy();
      return true;
    }
    state.requests += 1;
    state.idleSince = null;
    this.#requestIndex.set(req, state.requests);
    if (idle !== null) {
      // An explicit Connection header stops Node writing its own Keep-Alive hint (from keepAliveTimeout): this
      // one advertises longer than the fault honours, which is the whole point.
      res.setHeader('connection', 'keep-alive');
      res.setHeader('keep-alive', `timeout=${idle.advertise_timeout_s}`);
    }
    const tracked = state;
    res.once('finish', () => {
      tracked.idleSince = performance.now();
      if (idle !== null && idle.on === 'timer') {
        tracked.timer = this.#timer(() => {
          tracked.timer = null;
          if (tracked.idleSince === null) return;
          this.#count('close_idle');
          socket.destroy();
        }, idle.idle_ms);
      }
    });
    return false;
  }

  /**
   * Applies the fault that selects a chat request, if one does.
   * @returns how the request goes on: through `res`, a faulted stream, nowhere (answered or hung), and any PD fault
   */
  respond(req: IncomingMessage, res: ServerResponse, request: FaultSubject, requestId: string): FaultDecision {
    const fault = this.#select(req, request);
    if (fault === null) return { out: res, pd: null };
    this.#count(fault.kind);
    switch (fault.kind) {
      case 'hang':
        res.writeHead(200, { ...(request.stream ? SSE_HEADERS : { 'content-type': 'application/json' }), 'x-engine-request-id': requestId });
        res.flushHeaders();
        this.#hold(res);
        return { out: null, pd: null };
      case 'hang_before_headers':
        this.#hold(res);
        return { out: null, pd: null };
      case 'http_error': {
        const message = fault.status === 429 ? 'engine fault: rate limited' : `engine fault: HTTP ${fault.status}`;
        res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.retry_after_s === null ? {} : { 'retry-after': String(fault.retry_after_s) }) });
        res.end(JSON.stringify(errorBody(message, errorType(fault.status), fault.status)));
        return { out: null, pd: null };
      }
      case 'inflight_pin':
      case 'kv_wedge':
      case 'bootstrap_stall':
      case 'decode_stall':
        return { out: res, pd: pdFault(fault) };
      default:
        return { out: new FaultedStream(res, fault, this), pd: null };
    }
  }

  /** Ends every held response and timer; later faults do nothing. Called by the engine's close(). */
  close(): void {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const res of this.#held) res.destroy();
    this.#held.clear();
  }

  /** @internal A timer close() clears; unref'd so a fault never keeps a process alive. */
  timer(fn: () => void, ms: number): NodeJS.Timeout | null {
    return this.#timer(fn, ms);
  }

  /** @internal Keeps `res` open until the client leaves or close(). */
  hold(res: ServerResponse): void {
    this.#hold(res);
  }

  #timer(fn: () => void, ms: number): NodeJS.Timeout | null {
    if (this.#closed) return null;
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.#timers.add(t);
    return t;
  }

  #clearTimer(state: SocketState): void {
    if (state.timer === null) return;
    clearTimeout(state.timer);
    this.#timers.delete(state.timer);
    state.timer = null;
  }

  #hold(res: ServerResponse): void {
    if (this.#closed) {
      res.destroy();
      return;
    }
    this.#held.add(res);
    res.once('close', () => this.#held.delete(res));
  }

  #count(kind: EngineFaultKind): void {
    this.#firedByKind[kind] = (this.#firedByKind[kind] ?? 0) + 1;
  }

  #select(req: IncomingMessage, request: FaultSubject): RequestFault | null {
    if (this.#faults.length === 0) return null;
    const nth = this.#requestIndex.get(req) ?? 1;
    let round = 1;
    for (const m of request.messages) if (m.role === 'assistant') round += 1;
    for (const [i, fault] of this.#faults.entries()) {
      if (isStreamFault(fault) && !request.stream) continue;
      if (nth <= fault.after_requests || round < fault.from_round) continue;
      const matched = (this.#matched[i] ?? 0) + 1;
      this.#matched[i] = matched;
      if (matched % fault.every !== 0) continue;
      // Drawn only when a ratio applies, so adding `ratio: 1` never changes which requests other draws pick.
      if (fault.ratio < 1 && (this.#rngs[i]?.next() ?? 0) >= fault.ratio) continue;
      const fired = this.#firedAt[i] ?? 0;
      if (fault.times !== null && fired >= fault.times) continue;
      this.#firedAt[i] = fired + 1;
      return fault;
    }
    return null;
  }
}

type StreamState = 'pass' | 'silent' | 'dripping' | 'closed';

/**
 * A streamed response with a fault `after_chunks` data events in. The chat handler writes whole SSE blocks;
 * they are counted here, and the fault strikes just before the data event after the last one let through.
 */
class FaultedStream implements ChatResponse {
  readonly #res: ServerResponse;
  readonly #fault: StreamFault;
  readonly #injector: FaultInjector;
  #state: StreamState = 'pass';
  #dataEvents = 0;
  #struck = false;
  /** Blocks held back during a drip, and whether end() came meanwhile. */
  #queue: string[] = [];
  #endPending = false;

  constructor(res: ServerResponse, fault: StreamFault, injector: FaultInjector) {
    this.#res = res;
    this.#fault = fault;
    this.#injector = injector;
  }

  get destroyed(): boolean {
    return this.#res.destroyed;
  }

  get writableEnded(): boolean {
    return this.#res.writableEnded;
  }

  writeHead(statusCode: number, headers: Record<string, string>): this {
    this.#res.writeHead(statusCode, headers);
    return this;
  }

  flushHeaders(): void {
    this.#res.flushHeaders();
  }

  on(event: 'close', listener: () => void): this {
    this.#res.on(event, listener);
    return this;
  }

  write(chunk: string): boolean {
    this.#feed(chunk, false);
    return true;
  }

  end(chunk?: string): this {
    this.#feed(chunk ?? '', true);
    return this;
  }

  #feed(text: string, isEnd: boolean): void {
    let from = 0;
    while (from < text.length) {
      const cut = text.indexOf('\n\n', from);
      const to = cut < 0 ? text.length : cut + 2;
      this.#block(text.slice(from, to));
      from = to;
    }
    if (!isEnd) return;
    if (this.#state === 'pass') this.#res.end();
    else if (this.#state === 'dripping') this.#endPending = true;
    // silent: the response never ends; closed: nothing more to say.
  }

  #block(block: string): void {
    const isData = block.startsWith('data:');
    if (isData && !this.#struck && this.#dataEvents === this.#fault.after_chunks) this.#strike();
    switch (this.#state) {
      case 'pass':
        if (isData) this.#dataEvents += 1;
        this.#res.write(block);
        return;
      case 'dripping':
        this.#queue.push(block);
        return;
      default:
        return;
    }
  }

  #strike(): void {
    this.#struck = true;
    const res = this.#res;
    switch (this.#fault.kind) {
      case 'stall_mid_stream':
        this.#state = 'silent';
        this.#injector.hold(res);
        return;
      case 'close_mid_stream': {
        this.#state = 'closed';
        // end(), not destroy(): the events already written reach the client before the FIN, so it sees
        // exactly `after_chunks` events and then an unfinished chunked body.
        const socket = res.socket;
        socket?.end();
        this.#injector.timer(() => socket?.destroy(), CLOSE_FALLBACK_MS);
        return;
      }
      case 'end_mid_stream':
        this.#state = 'closed';
        res.end();
        return;
      case 'malformed_sse':
        res.write(`${this.#fault.line}\n\n`);
        return;
      case 'bad_tool_arguments':
        res.write(badToolCallEvent());
        return;
      case 'drip':
        this.#state = 'dripping';
        this.#drip(this.#fault.bytes, this.#fault.interval_ms, 0);
        return;
    }
  }

  /** One byte of a comment line every `intervalMs` (`:` then `.`s), then the line end and the held blocks. */
  #drip(bytes: number, intervalMs: number, sent: number): void {
    this.#injector.timer(() => {
      if (this.#res.destroyed) return;
      if (sent < bytes) {
        this.#res.write(sent === 0 ? ':' : '.');
        this.#drip(bytes, intervalMs, sent + 1);
        return;
      }
      this.#state = 'pass';
      this.#res.write('\n');
      const queued = this.#queue;
      this.#queue = [];
      for (const block of queued) this.#block(block);
      if (this.#endPending) this.#res.end();
    }, intervalMs);
  }
}

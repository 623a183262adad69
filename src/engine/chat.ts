// One chat completion on one server, from a validated request to its last byte. The unified server does it all;
// in PD the prefill server prefills and transfers the KV (its own response only tells the router it is done),
// and the decode server streams the answer. Each request ends exactly once: completed, aborted or failed.
import { performance } from 'node:perf_hooks';
import { planAnswer, reasoningFor, toChatMessage, type AnswerPlan } from './answer.js';
import type { ChatResponse, PdFault } from './faults.js';
import { ChatOutput } from './output.js';
import { extendChain, prefixChain, type PrefixLink } from './prefix-cache.js';
import { checkContext, type ChatRequest } from './protocol.js';
import type { ServerState } from './state.js';
import { errorBody, usage, type Envelope } from './wire.js';
import type { KvRoom } from './kv.js';
import type { RequestTrace } from './tracing.js';

/** What every server works out from a request before scheduling it. */
export interface PreparedChat {
  readonly chain: readonly PrefixLink[];
  readonly promptTokens: number;
  readonly plans: readonly AnswerPlan[];
  readonly env: Envelope;
}

/**
 * Tokenizes the prompt (its prefix chain), checks it against the context, and plans every choice's answer (a
 * prefill server plans none: decode generates the answer).
 * @throws BadRequest when the prompt or `max_tokens` do not fit the context (SGLang's 400)
 */
export function prepareChat(state: ServerState, request: ChatRequest, requestId: string): PreparedChat {
  const chain = prefixChain(request.toolsJson, request.messages);
  const head = chain[chain.length - 1];
  if (head === undefined) throw new Error('a prefix chain always starts with the tools link');
  checkContext(head.tokens, request.maxTokens, state.settings.context_length);
  const reasoning = reasoningFor(state.settings, state.modelName, request);
  const plans = state.role === 'prefill' ? [] : Array.from({ length: request.n }, (_, choice) => planAnswer(request, state.settings, head.hash, { reasoning, choice }));
  return { chain, promptTokens: head.tokens, plans, env: { id: requestId, created: Math.floor(Date.now() / 1000), model: request.model ?? state.modelName } };
}

type Outcome = 'completed' | 'aborted' | 'failed';

/** The stage a cancelled request was in, for its trace: the client (or the router) went away. */
const CANCELLED = 'cancelled: the client went away';

/** Counts a request in and, once, out. */
class Accounting {
  #ended = false;
  completionTokens = 0;
  reasoningTokens = 0;
  cachedTokens = 0;
  #firstTokenSeen = false;
  readonly #lastTokenMs: number[] = [];

  constructor(
    private readonly state: ServerState,
    private readonly promptTokens: number,
    private readonly arrivedAtMs: number,
  ) {
    state.requests += 1;
    state.active += 1;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** One token of `choice` came out: TTFT for the request's first, ITL between a choice's tokens. */
  token(choice: number, reasoning: boolean): void {
    const now = performance.now();
    this.state.lastOutputMs = now;
    this.completionTokens += 1;
    if (reasoning) this.reasoningTokens += 1;
    if (!this.#firstTokenSeen) {
      this.#firstTokenSeen = true;
      this.state.ttftSeconds.observe((now - this.arrivedAtMs) / 1000);
    }
    const last = this.#lastTokenMs[choice];
    if (last !== undefined) this.state.itlSeconds.observe((now - last) / 1000);
    this.#lastTokenMs[choice] = now;
  }

  end(outcome: Outcome): void {
    if (this.#ended) return;
    this.#ended = true;
    const s = this.state;
    s.active -= 1;
    s.promptTokens += this.promptTokens;
    s.cachedTokens += this.cachedTokens;
    s.completionTokens += this.completionTokens;
    if (outcome === 'completed') {
      s.completed += 1;
      s.e2eSeconds.observe((performance.now() - this.arrivedAtMs) / 1000);
    } else if (outcome === 'aborted') s.aborted += 1;
    else s.failed += 1;
  }
}

function outputFor(res: ChatResponse, request: ChatRequest, prepared: PreparedChat, arrivedAtMs: number): ChatOutput {
  const output = new ChatOutput(res, { env: prepared.env, stream: request.stream, includeUsage: request.includeUsage, arrivedAtMs, requestId: prepared.env.id });
  output.open();
  return output;
}

/** The unified server: prefill, the simulated transfer, decode, one scheduler job per choice. */
export function handleUnifiedChat(state: ServerState, request: ChatRequest, prepared: PreparedChat, res: ChatResponse, arrivedAtMs: number, trace: RequestTrace | null = null): void {
  const scheduler = state.unified!;
  trace?.stage('prefill_waiting');
  const { chain, promptTokens, plans } = prepared;
  const acct = new Accounting(state, promptTokens, arrivedAtMs);
  const output = outputFor(res, request, prepared, arrivedAtMs);
  let remaining = plans.length;
  let admitted = false;
  const tickets = plans.map((plan, choice) =>
    scheduler.submit({
      promptTokens,
      outputTokens: plan.deltas.length,
      admit: () => {
        const cached = Math.min(state.cache.lookup(chain), promptTokens);
        if (!admitted) {
          // The request's own figures come from its first choice admitted; the others share its prompt.
          admitted = true;
          acct.cachedTokens = cached;
          state.admittedPromptTokens += promptTokens;
          state.admittedCachedTokens += cached;
        }
        return promptTokens - cached;
      },
      onPrefilled: () => {
        state.cache.insert(chain);
        if (choice === 0) trace?.stage('decode_forward');
      },
      onToken: (index) => {
        if (output.gone) return cancelAll();
        const delta = plan.deltas[index];
        acct.token(choice, delta?.kind === 'reasoning');
        if (delta !== undefined) output.token(choice, delta, index === plan.deltas.length - 1);
      },
      onFinish: () => {
        remaining -= 1;
        output.finish(choice, plan.finishReason, remaining > 0);
        if (choice === 0) state.cache.insert(extendChain(chain, toChatMessage(plan.message)));
        if (remaining > 0) return;
        acct.end('completed');
        trace?.end();
        output.complete(
          usage(promptTokens, acct.completionTokens, acct.reasoningTokens, acct.cachedTokens, state.settings.enable_cache_report),
          plans.map((p) => ({ message: p.message, finishReason: p.finishReason })),
        );
      },
    }),
  );
  function cancelAll(): void {
    for (const t of tickets) t.cancel();
    acct.end('aborted');
    trace?.end(CANCELLED);
  }
  // A client that goes away mid-stream (or while queued) leaves the batch at once.
  res.on('close', () => {
    if (!acct.ended) cancelAll();
  });
}

/** One chat request on a PD server (prefill or decode), as the worker hands it over. */
export interface PdChat {
  state: ServerState;
  request: ChatRequest;
  prepared: PreparedChat;
  room: KvRoom;
  fault: PdFault | null;
  res: ChatResponse;
  arrivedAtMs: number;
  trace: RequestTrace | null;
}

/** Gives the request's KV room back, once whatever ends it first. */
function leaveOnce(kv: NonNullable<ServerState['kv']>, room: KvRoom): () => void {
  let left = false;
  return () => {
    if (left) return;
    left = true;
    kv.leave(room);
  };
}

/**
 * The PD prefill server: bootstrap, prefill, KV transfer. Its response (one finish chunk, or an error) only tells
 * the router the prefill side is done; the client's answer comes from decode.
 */
export function handlePrefillChat({ state, request, prepared, room, fault, res, arrivedAtMs, trace }: PdChat): void {
  const scheduler = state.prefill!;
  trace?.stage('prefill_bootstrap');
  const kv = state.kv!;
  const { chain, promptTokens } = prepared;
  if (fault === 'kv_wedge') scheduler.wedge();
  const acct = new Accounting(state, promptTokens, arrivedAtMs);
  const output = outputFor(res, request, prepared, arrivedAtMs);
  const leave = leaveOnce(kv, room);
  const ticket = scheduler.submit({
    rid: prepared.env.id,
    promptTokens,
    room,
    pinned: fault === 'inflight_pin',
    admit: () => {
      trace?.stage('prefill_forward');
      const cached = Math.min(state.cache.lookup(chain), promptTokens);
      acct.cachedTokens = cached;
      room.cachedTokens = cached;
      state.admittedPromptTokens += promptTokens;
      state.admittedCachedTokens += cached;
      return promptTokens - cached;
    },
    // The prefill caches the prompt only: the answer is generated on decode and never reaches this cache.
    onPrefilled: () => {
      state.cache.insert(chain);
      trace?.stage('prefill_transfer_kv_cache');
    },
    onTransferred: () => {
      trace?.end();
      // SGLang's prefill computes the first output token too, and reports it once the KV is sent.
      acct.token(0, false);
      acct.end('completed');
      leave();
      output.finish(0, 'length', false);
      output.complete(usage(promptTokens, 1, 0, acct.cachedTokens, state.settings.enable_cache_report), [{ message: { content: '', reasoning: null, toolCalls: [] }, finishReason: 'length' }]);
    },
    onFailed: (message) => {
      trace?.end(message);
      acct.end('failed');
      leave();
      output.fail(errorBody(message, 'InternalServerError', 500), 500);
    },
  });
  res.on('close', () => {
    if (acct.ended) return;
    // A stuck transfer keeps its room and its place in the inflight queue after the client has gone: the request
    // is not over for the server until its transfer fails. Its trace stays open in its stage too (cut and
    // exported as such when the engine stops).
    if (ticket.stuck()) return;
    ticket.cancel();
    acct.end('aborted');
    trace?.end(CANCELLED);
    leave();
  });
}

/** The PD decode server: preallocate, wait for the KV, decode every choice, stream the answer. */
export function handleDecodeChat({ state, request, prepared, room, fault, res, arrivedAtMs, trace }: PdChat): void {
  const scheduler = state.decode!;
  // SGLang's decode side: preallocation and the wait for the KV from prefill, then the decode batch.
  trace?.stage('decode_waiting');
  const kv = state.kv!;
  const { promptTokens, plans } = prepared;
  if (typeof fault === 'object' && fault !== null) scheduler.stall(fault.durationS === null ? null : fault.durationS * 1000);
  const acct = new Accounting(state, promptTokens, arrivedAtMs);
  const output = outputFor(res, request, prepared, arrivedAtMs);
  const leave = leaveOnce(kv, room);
  let remaining = plans.length;
  const ticket = scheduler.submit({
    rid: prepared.env.id,
    promptTokens,
    room,
    stallBootstrap: fault === 'bootstrap_stall',
    outputTokens: plans.map((p) => p.deltas.length),
    onTransferred: () => {
      trace?.stage('decode_forward');
      acct.cachedTokens = room.cachedTokens;
      leave();
    },
    onToken: (choice, index) => {
      if (output.gone) {
        ticket.cancel();
        acct.end('aborted');
        trace?.end(CANCELLED);
        return;
      }
      const plan = plans[choice]!;
      const delta = plan.deltas[index];
      acct.token(choice, delta?.kind === 'reasoning');
      if (delta !== undefined) output.token(choice, delta, index === plan.deltas.length - 1);
    },
    onChoiceFinish: (choice) => {
      remaining -= 1;
      output.finish(choice, plans[choice]!.finishReason, remaining > 0);
    },
    onFinish: () => {
      acct.end('completed');
      trace?.end();
      output.complete(
        usage(promptTokens, acct.completionTokens, acct.reasoningTokens, acct.cachedTokens, state.settings.enable_cache_report),
        plans.map((p) => ({ message: p.message, finishReason: p.finishReason })),
      );
    },
    onFailed: (message) => {
      trace?.end(message);
      acct.end('failed');
      leave();
      output.fail(errorBody(message, 'InternalServerError', 500), 500);
    },
  });
  res.on('close', () => {
    if (acct.ended) return;
    ticket.cancel();
    acct.end('aborted');
    trace?.end(CANCELLED);
    leave();
  });
}

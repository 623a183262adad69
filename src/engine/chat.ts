// One chat completion from admission to its last byte: prefix-cache lookup, the seeded answer plan, a scheduler
// job, and the wire format (SSE chunks or one JSON object). Each request ends exactly once: completed or aborted.
import { performance } from 'node:perf_hooks';
import { planAnswer, toChatMessage, type AssembledMessage, type Delta, type FinishReason } from './answer.js';
import { extendChain, prefixChain } from './prefix-cache.js';
import type { ChatRequest } from './protocol.js';
import type { EngineState } from './state.js';
import type { ChatResponse } from './faults.js';

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** Identity fields every chunk and completion object repeats. */
interface Envelope {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

function chunk(env: Envelope, delta: Delta | { role: 'assistant' } | Record<string, never>, finishReason: FinishReason | null): string {
  return sse({ ...env, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
}

function completion(env: Envelope, message: AssembledMessage, finishReason: FinishReason, usage: Usage): string {
  const body = {
    ...env,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: message.content,
          ...(message.reasoning === null ? {} : { reasoning_content: message.reasoning }),
          ...(message.toolCalls.length === 0
            ? {}
            : { tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }),
        },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage,
  };
  return JSON.stringify(body);
}

/**
 * Answers one validated request. `arrivedAtMs` (performance.now() when the request arrived) anchors the
 * `: engine-first-token-ms=` comment and the latency histograms.
 */
export function handleChat(state: EngineState, request: ChatRequest, res: ChatResponse, arrivedAtMs: number, requestId: string): void {
  const chain = prefixChain(request.toolsJson, request.messages);
  const head = chain[chain.length - 1];
  if (head === undefined) throw new Error('a prefix chain always starts with the tools link');
  const promptTokens = head.tokens;
  let cachedTokens = 0;
  const plan = planAnswer(request, state.settings, head.hash);
  const lastIndex = plan.deltas.length - 1;
  const env: Envelope = { id: requestId, created: Math.floor(Date.now() / 1000), model: request.model ?? state.modelName };
  const usage = (completionTokens: number): Usage => ({
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  });

  state.active += 1;
  let emitted = 0;
  let ended = false;
  const end = (outcome: 'completed' | 'aborted'): void => {
    if (ended) return;
    ended = true;
    state.active -= 1;
    state.promptTokens += promptTokens;
    state.cachedTokens += cachedTokens;
    state.completionTokens += emitted;
    if (outcome === 'completed') {
      state.completed += 1;
      state.e2eSeconds.observe((performance.now() - arrivedAtMs) / 1000);
    } else {
      state.aborted += 1;
    }
  };

  if (request.stream) {
    // Headers go out at once, as SGLang's do: a client's headers timer must not include queueing or prefill.
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-engine-request-id': requestId });
    res.flushHeaders();
  }
  const gone = (): boolean => res.destroyed || res.writableEnded;
  let tail = '';

  const ticket = state.scheduler.submit({
    promptTokens,
    admit: () => {
      cachedTokens = Math.min(state.cache.lookup(chain), promptTokens);
      state.admittedPromptTokens += promptTokens;
      state.admittedCachedTokens += cachedTokens;
      return promptTokens - cachedTokens;
    },
    outputTokens: plan.deltas.length,
    onPrefilled: () => state.cache.insert(chain),
    onToken: (index) => {
      if (gone()) {
        ticket.cancel();
        end('aborted');
        return;
      }
      emitted = index + 1;
      const sinceArrivalMs = performance.now() - arrivedAtMs;
      if (index === 0) state.ttftSeconds.observe(sinceArrivalMs / 1000);
      const delta = plan.deltas[index];
      if (delta === undefined || !request.stream) return;
      // The role chunk, the timing comment and the first token share one write, so a client's first-token
      // time and ours describe the same bytes.
      const lead = index === 0 ? `${chunk(env, { role: 'assistant' }, null)}: engine-first-token-ms=${sinceArrivalMs.toFixed(3)}\n\n` : '';
      const out = lead + chunk(env, delta, null);
      // The last token goes out with the finish chunk, usage and [DONE] in onFinish.
      if (index === lastIndex) tail = out;
      else res.write(out);
    },
    onFinish: () => {
      // The client will send this answer back as part of its next prompt: make that prefix a hit.
      state.cache.insert(extendChain(chain, toChatMessage(plan.message)));
      end('completed');
      if (gone()) return;
      if (!request.stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'x-engine-request-id': requestId });
        res.end(completion(env, plan.message, plan.finishReason, usage(emitted)));
        return;
      }
      let out = `${tail}${chunk(env, {}, plan.finishReason)}`;
      if (request.includeUsage) out += sse({ ...env, object: 'chat.completion.chunk', choices: [], usage: usage(emitted) });
      res.end(`${out}data: [DONE]\n\n`);
    },
  });

  // A client that goes away mid-stream (or while queued) leaves the batch at once.
  res.on('close', () => {
    if (ended) return;
    ticket.cancel();
    end('aborted');
  });
}

// How a replay learns the server's tokens, probed once when it starts (bounded): llama.cpp's `POST /tokenize
// {content}` → `{tokens}` with `/apply-template`, vLLM's and SGLang's `POST /tokenize {model, prompt}` →
// `{count, tokens}` with `{model, messages, tools}` (the request as their chat template renders it); without
// them, a chat request's usage, and one probe of the run's first request's exact shape (max_tokens 1).
import { ReplayCalibration, syntheticText, TEMPLATE_TOKENS_PER_MESSAGE, type ServerTokenizer } from '../agent/index.js';
import type { Transport } from '../transport/index.js';
import { isObject } from '../util/index.js';
import type { ReplayPlan } from './replay.js';

/** The probe's whole budget: a server without the endpoint answers 404 at once; one that hangs costs this. */
const PROBE_MS = 2000;
/** Each later count (a first round, before any usage is known). */
const COUNT_MS = 5000;
/** The synthetic sample the density is measured on. */
const SAMPLE = syntheticText('roundload tokenize probe', 4000);

type Kind = ServerTokenizer['kind'];

/** The number of tokens in a tokenize answer, or null when it is not one. */
function tokensOf(kind: Kind, body: string): number | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  if (!isObject(value)) return null;
  if (kind === 'vllm' && typeof value.count === 'number') return value.count;
  return Array.isArray(value.tokens) ? value.tokens.length : null;
}

function requestBody(kind: Kind, model: string, text: string): string {
  return JSON.stringify(kind === 'llama.cpp' ? { content: text } : { model, prompt: text, add_special_tokens: false });
}

async function countWith(transport: Transport, headers: Record<string, string>, kind: Kind, model: string, text: string, timeoutMs: number): Promise<{ status: number; tokens: number | null }> {
  const res = await transport.get('/tokenize', { timeoutMs, headers, json: requestBody(kind, model, text) });
  return { status: res.status, tokens: res.status === 200 ? tokensOf(kind, res.body) : null };
}

/** llama.cpp's `POST /apply-template {messages, tools}` → `{prompt}`: the request as its chat template renders it. */
async function renderWith(transport: Transport, headers: Record<string, string>, body: string, timeoutMs: number): Promise<string> {
  const request = JSON.parse(body) as Record<string, unknown>;
  const json = JSON.stringify({ messages: request.messages, ...(request.tools === undefined ? {} : { tools: request.tools }) });
  const res = await transport.get('/apply-template', { timeoutMs, headers, json });
  const value: unknown = res.status === 200 ? JSON.parse(res.body) : null;
  if (!isObject(value) || typeof value.prompt !== 'string') throw new Error(`POST /apply-template: HTTP ${res.status}`);
  return value.prompt;
}

/** vLLM's and SGLang's `POST /tokenize {model, messages, tools}` → `{count}`: the request as their chat template
 * renders it, generation prompt included (both add it by default). */
async function countMessages(transport: Transport, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  const request = JSON.parse(body) as Record<string, unknown>;
  const json = JSON.stringify({ model: request.model, messages: request.messages, ...(request.tools === undefined ? {} : { tools: request.tools }) });
  const res = await transport.get('/tokenize', { timeoutMs, headers, json });
  const count = res.status === 200 ? tokensOf('vllm', res.body) : null;
  if (count === null) throw new Error(`POST /tokenize with messages: HTTP ${res.status}`);
  return count;
}

/** A whole request's tokens as the server renders it, when it takes `/tokenize` with messages (probed once). */
async function messagesCounter(transport: Transport, headers: Record<string, string>, model: string, leftMs: number): Promise<((body: string) => Promise<number>) | null> {
  const probe = JSON.stringify({ model, messages: [{ role: 'user', content: 'roundload' }] });
  try {
    await countMessages(transport, headers, probe, Math.max(1, leftMs));
  } catch {
    return null;
  }
  return (body) => countMessages(transport, headers, body, COUNT_MS);
}

/** A whole request's tokens as the server renders it, when it has llama.cpp's `/apply-template` (probed once). */
async function requestCounter(transport: Transport, headers: Record<string, string>, count: (text: string) => Promise<number>, leftMs: number): Promise<((body: string) => Promise<number>) | null> {
  const probe = JSON.stringify({ messages: [{ role: 'user', content: 'roundload' }] });
  try {
    await renderWith(transport, headers, probe, Math.max(1, leftMs));
  } catch {
    return null;
  }
  return async (body) => count(await renderWith(transport, headers, body, COUNT_MS));
}

/** Finds the server's tokenize endpoint (llama.cpp's form first, then vLLM's) within PROBE_MS; says what it found. */
export async function probeTokenizer(transport: Transport, headers: Record<string, string>, model: string): Promise<{ tokenizer: ServerTokenizer | null; line: string }> {
  const deadline = performance.now() + PROBE_MS;
  const tried: string[] = [];
  for (const kind of ['llama.cpp', 'vllm'] as const) {
    const leftMs = Math.round(deadline - performance.now());
    if (leftMs <= 0) break;
    let answer: { status: number; tokens: number | null };
    try {
      answer = await countWith(transport, headers, kind, model, SAMPLE, leftMs);
    } catch (error) {
      tried.push(`${kind} form: ${error instanceof Error ? error.message : String(error)}`);
      break;
    }
    if (answer.tokens !== null && answer.tokens > 0) {
      const count = async (text: string): Promise<number> => (await countWith(transport, headers, kind, model, text, COUNT_MS)).tokens ?? Promise.reject(new Error('no token count'));
      const leftMs = Math.round(deadline - performance.now());
      const countRequest = kind === 'llama.cpp' ? await requestCounter(transport, headers, count, leftMs) : await messagesCounter(transport, headers, model, leftMs);
      const tokenizer: ServerTokenizer = { kind, tokensPerChar: answer.tokens / SAMPLE.length, count, countRequest };
      const perToken = (SAMPLE.length / answer.tokens).toFixed(2);
      const rendered = countRequest === null ? '' : kind === 'llama.cpp' ? ', each request as POST /apply-template renders it' : ', each request as POST /tokenize with messages renders it';
      return {
        tokenizer,
        line: `POST /tokenize (${kind === 'vllm' ? 'vLLM/SGLang' : kind} form) found: the server counts ${perToken} characters a token of synthetic text; requests are sized with it${rendered}`,
      };
    }
    tried.push(`${kind} form: HTTP ${answer.status}`);
    // No such endpoint at all: the other form is not worth a request.
    if (answer.status === 404 || answer.status === 405) break;
  }
  return { tokenizer: null, line: `no tokenize endpoint (${tried.join('; ')})` };
}

/** The usage.prompt_tokens of a chat request sent with max_tokens 1, not streamed (not part of the replay). */
async function promptTokensOf(transport: Transport, headers: Record<string, string>, request: Record<string, unknown>): Promise<{ status: number; tokens: number | null }> {
  const { stream_options: _options, max_completion_tokens: _max, ...rest } = request;
  const json = JSON.stringify({ ...rest, max_tokens: 1, stream: false });
  const res = await transport.get('/v1/chat/completions', { timeoutMs: PROBE_MS * 5, headers, json });
  const usage = res.status === 200 ? (JSON.parse(res.body) as { usage?: { prompt_tokens?: unknown } }).usage : undefined;
  return { status: res.status, tokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null };
}

/** Without a tokenize endpoint: one chat request of synthetic text (max_tokens 1, not part of the replay) gives
 * the server's tokens per synthetic character from its usage, and the run's first request is probed once in
 * its exact shape (messages and tools) for the template's own tokens. Null when the server gives no usage. */
async function probeUsage(transport: Transport, headers: Record<string, string>, model: string): Promise<{ tokenizer: ServerTokenizer | null; line: string }> {
  try {
    const answer = await promptTokensOf(transport, headers, { model, messages: [{ role: 'user', content: SAMPLE }] });
    const prompt = answer.tokens === null ? null : answer.tokens - TEMPLATE_TOKENS_PER_MESSAGE;
    if (prompt === null || prompt <= 0)
      return { tokenizer: null, line: `a probe request gave no usage (HTTP ${answer.status}): requests are sized from each conversation's usage once its first answer is in` };
    const probeRequest = async (body: string): Promise<number> =>
      (await promptTokensOf(transport, headers, JSON.parse(body) as Record<string, unknown>)).tokens ?? Promise.reject(new Error('no usage'));
    const tokenizer: ServerTokenizer = { kind: 'usage', tokensPerChar: prompt / SAMPLE.length, count: null, probeRequest };
    return {
      tokenizer,
      line: `a probe request's usage: the server counts ${(SAMPLE.length / prompt).toFixed(2)} characters a token of synthetic text; the first request is probed once in its exact shape (max_tokens 1, not recorded), then each answer's usage`,
    };
  } catch (error) {
    return {
      tokenizer: null,
      line: `a probe request failed (${error instanceof Error ? error.message : String(error)}): requests are sized from each conversation's usage once its first answer is in`,
    };
  }
}

/** The run's calibration: probes the tokenize endpoint unless sizing is by characters or nothing is synthetic. */
export async function replayCalibration(transport: Transport, headers: Record<string, string>, model: string, plan: ReplayPlan): Promise<{ calibration: ReplayCalibration; line: string | null }> {
  if (plan.settings.sizing === 'characters') return { calibration: new ReplayCalibration(null, false), line: 'synthetic text at its recorded characters (replay.sizing: characters)' };
  if (plan.verbatim) return { calibration: new ReplayCalibration(null, false), line: null };
  const found = await probeTokenizer(transport, headers, model);
  if (found.tokenizer !== null) return { calibration: new ReplayCalibration(found.tokenizer), line: found.line };
  const probed = await probeUsage(transport, headers, model);
  return { calibration: new ReplayCalibration(probed.tokenizer), line: `${found.line}; ${probed.line}` };
}

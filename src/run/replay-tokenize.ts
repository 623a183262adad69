// The server's tokenize endpoint, probed once when a replay starts (bounded): llama.cpp's `POST /tokenize
// {content}` → `{tokens}`, vLLM's `POST /tokenize {model, prompt}` → `{count, tokens}` (SGLang answers the same
// way). With one, a replay sizes its first requests in the server's own tokens; without, it learns from usage.
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
      const countRequest = kind === 'llama.cpp' ? await requestCounter(transport, headers, count, Math.round(deadline - performance.now())) : null;
      const tokenizer: ServerTokenizer = { kind, tokensPerChar: answer.tokens / SAMPLE.length, count, countRequest };
      const perToken = (SAMPLE.length / answer.tokens).toFixed(2);
      const rendered = countRequest === null ? '' : ', each first request as POST /apply-template renders it';
      return { tokenizer, line: `POST /tokenize (${kind} form) found: the server counts ${perToken} characters a token of synthetic text; first rounds are sized with it${rendered}` };
    }
    tried.push(`${kind} form: HTTP ${answer.status}`);
    // No such endpoint at all: the other form is not worth a request.
    if (answer.status === 404 || answer.status === 405) break;
  }
  return { tokenizer: null, line: `no tokenize endpoint (${tried.join('; ')})` };
}

/** Without a tokenize endpoint: one chat request of synthetic text (max_tokens 1, not part of the replay) gives
 * the server's tokens per synthetic character from its usage. Null when it has none to give. */
async function probeUsage(transport: Transport, headers: Record<string, string>, model: string): Promise<{ tokenizer: ServerTokenizer | null; line: string }> {
  const json = JSON.stringify({ model, messages: [{ role: 'user', content: SAMPLE }], max_tokens: 1, stream: false });
  try {
    const res = await transport.get('/v1/chat/completions', { timeoutMs: PROBE_MS * 5, headers, json });
    const usage = res.status === 200 ? (JSON.parse(res.body) as { usage?: { prompt_tokens?: unknown } }).usage : undefined;
    const prompt = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens - TEMPLATE_TOKENS_PER_MESSAGE : null;
    if (prompt === null || prompt <= 0)
      return { tokenizer: null, line: `a probe request gave no usage (HTTP ${res.status}): requests are sized from each conversation's usage once its first answer is in` };
    const tokenizer: ServerTokenizer = { kind: 'usage', tokensPerChar: prompt / SAMPLE.length, count: null };
    return { tokenizer, line: `a probe request's usage: the server counts ${(SAMPLE.length / prompt).toFixed(2)} characters a token of synthetic text; then each answer's usage` };
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

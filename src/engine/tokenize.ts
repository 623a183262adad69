// SGLang's `POST /tokenize` (and `/v1/tokenize`) in the engine's own tokens: `{model, prompt}` (a string or a
// list of them) → `{tokens, count, max_model_len}`, or `{model, messages, tools}` → the count of the request as
// the chat template renders it — the same count its chat completion reports as usage.prompt_tokens.
import { isObject } from '../util/index.js';
import { prefixChain } from './prefix-cache.js';
import { BadRequest, parseChatRequest } from './protocol.js';
import { textTokens } from './tokens.js';

/** The answer's status and JSON body. */
export interface TokenizeAnswer {
  status: number;
  body: unknown;
}

/** Token ids the engine hands out: positions (it has no vocabulary; only the count means anything). */
const ids = (count: number): number[] => Array.from({ length: count }, (_, i) => i);

/** Answers a tokenize request body as SGLang does: exactly one of `prompt` and `messages`. */
export function tokenizeAnswer(raw: string, contentType: string | undefined, contextLength: number): TokenizeAnswer {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { status: 400, body: { object: 'error', message: 'JSON decode error', type: 'Bad Request', param: null, code: 400 } };
  }
  const prompt = isObject(body) ? body.prompt : undefined;
  const messages = isObject(body) ? body.messages : undefined;
  if ((prompt === undefined || prompt === null) === (messages === undefined || messages === null)) {
    return { status: 400, body: { object: 'error', message: "Exactly one of 'prompt' or 'messages' must be provided.", type: 'Bad Request', param: null, code: 400 } };
  }
  if (typeof prompt === 'string') {
    const count = textTokens(prompt);
    return { status: 200, body: { tokens: ids(count), count, max_model_len: contextLength } };
  }
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) {
    const counts = prompt.map((p) => textTokens(p));
    return { status: 200, body: { tokens: counts.map(ids), count: counts, max_model_len: contextLength } };
  }
  if (prompt !== undefined && prompt !== null) {
    return { status: 400, body: { object: 'error', message: 'prompt: Input should be a valid string or list of strings', type: 'Bad Request', param: null, code: 400 } };
  }
  try {
    const request = parseChatRequest(raw, { contentType, contextLength });
    const count = prefixChain(request.toolsJson, request.messages).at(-1)?.tokens ?? 0;
    return { status: 200, body: { tokens: ids(count), count, max_model_len: contextLength } };
  } catch (error) {
    if (!(error instanceof BadRequest)) throw error;
    return { status: 400, body: { object: 'error', message: error.message, type: error.type, param: null, code: 400 } };
  }
}

// The preflight: before any agent starts, one small streamed chat request on the agents' own path (bounded by
// the workload's watchdog deadlines) and a look at the target's model list. A run that cannot complete one
// request stops here with exit 3 and the cause (URL, HTTP status, the server's own message, what to change)
// instead of recording a whole run of identical failures.
import { performance } from 'node:perf_hooks';
import type { Workload } from '../config/index.js';
import { sendRound } from '../agent/index.js';
import type { Transport, ConnectionTracker } from '../transport/index.js';
import { realClock, type Clock } from '../watchdog/index.js';
import type { PathKind, PreflightEvent, RequestRecord } from '../types/index.js';
import { PreflightError, TargetUnreachableError, type RoundloadError } from '../errors.js';
import { printable } from '../util/index.js';

export interface PreflightInput {
  workload: Workload;
  transport: Transport;
  tracker: ConnectionTracker;
  headers: Record<string, string>;
  /** Path of the chat endpoint (`/v1/chat/completions`, after the base URL's own path). */
  endpoint: string;
  path: PathKind;
  /** The proxy requests go through (CONNECT or TLS proxy), or null. */
  proxyUrl: string | null;
  runStartMs: number;
  clock?: Clock;
}

/** The test prompt: small, streamed, answerable by any chat model in a few tokens. */
const PROMPT = 'Reply with one word: ok.';
const MAX_TOKENS = 16;
/** Connect-level failures that mean nothing answers at the target address itself. */
const UNREACHABLE = new Set(['connection_refused', 'dns', 'connect_timeout']);
/** Models listed in a message, at most. */
const MODELS_SHOWN = 10;

/** Sends the preflight request and reads the model list. Never throws: the event says how it went. */
export async function runPreflight(input: PreflightInput): Promise<PreflightEvent> {
  const { workload, transport } = input;
  const w = workload.watchdog;
  // The deployment's extra fields too: a router or template that needs them must see them here first.
  const body = JSON.stringify({
    ...workload.target.extra_body,
    model: workload.target.model,
    messages: [{ role: 'user', content: PROMPT }],
    max_tokens: MAX_TOKENS,
    temperature: 0,
    stream: true,
    ...(workload.conversation.include_usage ? { stream_options: { include_usage: true } } : {}),
  });
  const url = `${transport.origin}${input.endpoint}`;
  const { record } = await sendRound(
    {
      lane: transport.probeLane(),
      tracker: input.tracker,
      clock: input.clock ?? realClock,
      deadlines: { connectMs: w.connect_ms, headersMs: w.headers_ms, firstTokenMs: w.first_token_ms, stallMs: w.stall_ms, totalMs: w.total_ms },
      path: input.path,
      endpoint: input.endpoint,
      headers: input.headers,
      runStartMs: input.runStartMs,
      proxyUrl: input.proxyUrl,
    },
    { agent: -1, conversation: 'preflight', round: 0, phase: 'preflight', body },
  );
  // The model list only when the chat request reached an HTTP server (else it would fail the same way).
  const models = record.http_status === null ? { ids: null, error: 'not read (the chat request got no HTTP answer)' } : await listModels(transport, input.headers, w.connect_ms + w.headers_ms);
  const model = workload.target.model;
  const listed = models.ids === null ? null : models.ids.includes(model);
  const event: PreflightEvent = {
    kind: 'preflight',
    t: record.t,
    run_ms: Math.round(performance.now() - input.runStartMs),
    ok: record.status === 'ok',
    url,
    proxy: input.proxyUrl === null ? null : safeOrigin(input.proxyUrl),
    http_status: record.http_status,
    ttft_ms: record.ttft_ms,
    e2e_ms: record.e2e_ms,
    error: record.error,
    hang: record.hang,
    model,
    models: models.ids,
    models_error: models.error,
    model_listed: listed,
    notes: [],
  };
  if (listed === false) {
    event.notes.push(
      `target.model "${model}" is not among the models ${transport.origin} lists at /v1/models (${shown(models.ids ?? [])}); requests may be refused or go to another model: set --set target.model=NAME`,
    );
  } else if (models.ids === null && record.http_status !== null) {
    event.notes.push(`the model list could not be read (${models.error}): target.model "${model}" was not checked`);
  }
  return event;
}

/** A one-line account of a preflight that passed, for the log. */
export function preflightLine(event: PreflightEvent): string {
  const e = printable(event);
  const via = e.proxy === null ? '' : ` via ${e.proxy}`;
  const model = e.model_listed === true ? `; model "${e.model}" is served` : '';
  return `POST ${e.url}${via} → HTTP ${e.http_status ?? '-'}, first token in ${e.ttft_ms === null ? '-' : Math.round(e.ttft_ms)} ms, done in ${Math.round(e.e2e_ms)} ms${model}`;
}

/**
 * The error a failed preflight ends the run with (exit 3): the URL, the HTTP status, the server's own message,
 * and what to change. Nothing answering at the target address keeps its own code (`ERR_TARGET_UNREACHABLE`).
 */
export function preflightFailure(event: PreflightEvent, workload: Workload): RoundloadError {
  // The server's message, its model ids: each on the line that quotes it, without the controls they may hold.
  const e = printable(event);
  const record = { error: e.error, hang: e.hang, http_status: e.http_status } satisfies Partial<RequestRecord>;
  const via = e.proxy === null ? '' : ` via ${e.proxy}`;
  if (record.error !== null && UNREACHABLE.has(record.error.class) && e.proxy === null) {
    return new TargetUnreachableError(e.url, { detail: `${record.error.class}: ${record.error.message}` });
  }
  const lines: string[] = [];
  if (record.error !== null && record.error.class === 'proxy_unreachable') {
    const why = record.error.message.replace(/^proxy \S+ unreachable \(([^)]+)\): /, '$1: ');
    lines.push(`the proxy ${e.proxy ?? ''} is unreachable (${why}), so the preflight request to ${e.url} never left`);
    lines.push('check --via (target.via) and that the proxy is up');
  } else if (record.error !== null && record.error.class === 'proxy_refused') {
    lines.push(`the CONNECT proxy ${e.proxy ?? ''} refused the tunnel for the preflight request to ${e.url}: ${record.error.message}`);
    lines.push('check that the proxy allows CONNECT to this host and port (and its credentials, for a 407)');
  } else if (record.hang !== null) {
    const h = record.hang;
    lines.push(
      `the preflight request POST ${e.url}${via} got no answer: watchdog.${h.deadline} (${h.deadline_ms} ms) passed in phase ${h.phase}${e.http_status === null ? '' : ` after HTTP ${e.http_status}`}`,
    );
    lines.push('a slow cold start? raise the watchdog deadlines; to record the hangs anyway, run with --no-preflight');
  } else if (record.error !== null) {
    lines.push(`the preflight request POST ${e.url}${via} failed: ${record.error.message}${record.error.message.startsWith('HTTP ') ? '' : ` (${record.error.class})`}`);
    lines.push(...hints(e, workload));
  } else {
    lines.push(`the preflight request POST ${e.url}${via} failed`);
  }
  for (const n of e.notes) if (!lines.includes(n)) lines.push(n);
  return new PreflightError(`preflight failed: ${lines.join('\n  ')}`, { context: { url: e.url, http_status: e.http_status, error_class: record.error?.class ?? null } });
}

/** What to change, from what the server said. */
function hints(e: PreflightEvent, workload: Workload): string[] {
  const out: string[] = [];
  const status = e.http_status ?? 0;
  const path = e.error?.url_path ?? new URL(e.url).pathname;
  if (status === 404 && path.includes('/v1/v1/')) {
    const base = e.url.slice(0, e.url.length - path.length) + path.slice(0, path.indexOf('/v1/v1/'));
    out.push(`the path has /v1 twice: the base URL already ends in /v1; give it without (--target ${base})`);
  }
  if ((status === 404 || status === 400) && e.model_listed === false) {
    out.push(`target.model "${e.model}" is not served here; the server lists: ${shown(e.models ?? [])} (set --set target.model=NAME)`);
  }
  if (status === 401 || status === 403) {
    const env = workload.target.api_key_env;
    out.push(
      env === null
        ? 'no API key was sent: set target.api_key_env to the name of the environment variable that holds it'
        : `the key in $${env} was refused: check its value and that it is meant for this server`,
    );
  }
  if (status === 502 || status === 503) out.push('the proxy or router answered, but nothing behind it served the request: is the engine up?');
  return out;
}

async function listModels(transport: Transport, headers: Record<string, string>, timeoutMs: number): Promise<{ ids: string[] | null; error: string | null }> {
  try {
    const res = await transport.get('/v1/models', { timeoutMs, headers });
    const where = `${transport.basePath}/v1/models`;
    if (res.status !== 200) return { ids: null, error: `HTTP ${res.status} on ${where}` };
    const json = JSON.parse(res.body) as { data?: unknown };
    if (!Array.isArray(json.data)) return { ids: null, error: `${where} has no data list` };
    return { ids: json.data.flatMap((m) => (typeof m === 'object' && m !== null && typeof (m as { id?: unknown }).id === 'string' ? [(m as { id: string }).id] : [])), error: null };
  } catch (error) {
    return { ids: null, error: error instanceof Error ? error.message : String(error) };
  }
}

function shown(ids: readonly string[]): string {
  if (ids.length === 0) return 'none';
  const list = ids
    .slice(0, MODELS_SHOWN)
    .map((id) => `"${id}"`)
    .join(', ');
  return ids.length > MODELS_SHOWN ? `${list} and ${ids.length - MODELS_SHOWN} more` : list;
}

/** A URL's origin without credentials (a proxy URL may carry `user:pass@`). */
function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(proxy)';
  }
}

// What a reproducer needs from a run folder, as one JSON-able plan: the request sequence, the body fields, the
// deadlines, where the run sent its requests, and what failed. Built from run.json (the workload, redacted),
// summary.json (the diagnosis) and the picked sequence; no secret and no message text goes in.
import { resolveTools, toolsPayload } from '../agent/index.js';
import type { ToolSpec } from '../config/index.js';
import type { RunManifest } from '../results/index.js';
import { isObject } from '../util/index.js';
import type { BodyPlan } from './bodies.js';
import type { ReproFailure, ReproRequest, ReproSequence } from './pick.js';

export interface ReproDeadlines {
  connect_ms: number;
  headers_ms: number;
  first_token_ms: number;
  stall_ms: number;
  total_ms: number;
}

export interface ReproPlan extends BodyPlan {
  generated_by: string;
  run: { folder: string; name: string; status: string; started_at: string | null; path: string; replayed_trace: boolean };
  /** Base URL the run's agents sent to (the hop or proxy when there was one): `--target`'s default. */
  target: string;
  /** `/v1/chat/completions`, after the target's own path. */
  endpoint: string;
  /** The run's HTTP CONNECT proxy: `--proxy`'s default. */
  proxy: string | null;
  insecure: boolean;
  /** The NAME of the environment variable the run read its API key from (never the key). */
  api_key_env: string | null;
  /** `target.headers` whose values are not secret; the others are only named in `dropped_headers`. */
  headers: Record<string, string>;
  dropped_headers: string[];
  deadlines: ReproDeadlines;
  connection: string | null;
  requests: ReproRequest[];
  failure: ReproFailure & { description: string };
  /** summary.json's diagnosis in one line, or null without a summary. */
  diagnosis: string | null;
}

const REDACTED = '[redacted]';

function section(workload: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = workload[key];
  return isObject(v) ? v : {};
}

function num(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** Every body field but `messages`, as the run's agents sent them (src/agent/conversation.ts). */
function bodyHead(manifest: RunManifest): Record<string, unknown> {
  const target = section(manifest.workload, 'target');
  const conversation = section(manifest.workload, 'conversation');
  const model = manifest.target.model ?? (typeof target.model === 'string' ? target.model : 'default');
  const head: Record<string, unknown> = { model, stream: true, max_tokens: num(conversation.max_tokens, 256), temperature: num(conversation.temperature, 0) };
  if (conversation.include_usage !== false) head.stream_options = { include_usage: true };
  const spec = conversation.tools;
  const tools = spec === 'none' ? [] : Array.isArray(spec) ? (spec as ToolSpec[]) : resolveTools('default');
  if (tools.length > 0) {
    head.tools = toolsPayload(tools);
    head.tool_choice = typeof conversation.tool_choice === 'string' ? conversation.tool_choice : 'auto';
  }
  const extra = section(target, 'extra_body');
  for (const [key, value] of Object.entries(extra)) if (value !== REDACTED) head[key] = value;
  return head;
}

function headers(manifest: RunManifest): { headers: Record<string, string>; dropped: string[] } {
  const out: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(section(section(manifest.workload, 'target'), 'headers'))) {
    // Belt and braces: run.json masks secret-looking headers; anything masked, odd or auth-like stays out.
    if (typeof value !== 'string' || value.includes(REDACTED) || value.includes('***') || /auth|key|token|cookie|secret/i.test(name)) dropped.push(name);
    else out[name] = value;
  }
  return { headers: out, dropped };
}

function deadlines(manifest: RunManifest): ReproDeadlines {
  const w = section(manifest.workload, 'watchdog');
  return {
    connect_ms: num(w.connect_ms, 10_000),
    headers_ms: num(w.headers_ms, 60_000),
    first_token_ms: num(w.first_token_ms, 120_000),
    stall_ms: num(w.stall_ms, 30_000),
    total_ms: num(w.total_ms, 600_000),
  };
}

/** `hang at headers (headers_ms 1200)`, `error http_5xx (HTTP 502)`. */
export function describeFailure(f: ReproFailure, connection: string | null): string {
  const what =
    f.hang !== null
      ? `hang at ${f.hang.phase} (${f.hang.deadline} ${f.hang.deadline_ms}${f.tokens !== null && f.tokens > 0 ? `, after ${f.tokens} tokens` : ''})`
      : `error ${f.error_class ?? 'unknown'}${f.http_status === null ? '' : ` (HTTP ${f.http_status})`}`;
  const socket = connection === null ? 'before any socket was open' : `on connection ${connection} (nth ${f.nth}${f.nth > 1 ? ', a reused socket' : ', a fresh socket'})`;
  return `request ${f.request} of the sequence, ${socket}, sent ${f.t}: ${what}`;
}

/** summary.json's diagnosis as one line: `diagnosis: proxy (0.80): <first evidence>`. */
export function diagnosisLine(summary: unknown): string | null {
  if (!isObject(summary) || !isObject(summary.diagnosis)) return null;
  const d = summary.diagnosis;
  const confidence = typeof d.confidence === 'number' ? ` (${d.confidence.toFixed(2)})` : '';
  const first = Array.isArray(d.evidence) && typeof d.evidence[0] === 'string' ? `: ${d.evidence[0]}` : '';
  return `diagnosis: ${String(d.verdict)}${confidence}${first}`;
}

/** What the plan is made of: the folder's files as read, and the picked sequence. */
export interface PlanInputs {
  folder: string;
  manifest: RunManifest;
  /** run.json's `route` (`request_url`, `connect_proxy`), which the manifest reader does not keep. */
  route: Record<string, unknown>;
  /** summary.json, or null when the run has none. */
  summary: unknown;
  sequence: ReproSequence;
  version: string;
}

export function buildPlan({ folder, manifest, route, summary, sequence, version }: PlanInputs): ReproPlan {
  const conversation = section(manifest.workload, 'conversation');
  const target = section(manifest.workload, 'target');
  const h = headers(manifest);
  return {
    generated_by: `roundload ${version}`,
    run: { folder, name: manifest.name, status: manifest.status, started_at: manifest.started_at, path: manifest.path, replayed_trace: isObject(manifest.workload.replay) },
    target: typeof route.request_url === 'string' ? route.request_url : manifest.target.url,
    endpoint: '/v1/chat/completions',
    proxy: typeof route.connect_proxy === 'string' ? route.connect_proxy : null,
    insecure: manifest.target.tls_insecure,
    api_key_env: typeof target.api_key_env === 'string' ? target.api_key_env : null,
    headers: h.headers,
    dropped_headers: h.dropped,
    deadlines: deadlines(manifest),
    head: bodyHead(manifest),
    system_chars: 4 * num(conversation.system_prompt_tokens, 0),
    connection: sequence.connection,
    requests: sequence.requests,
    failure: { ...sequence.failure, description: describeFailure(sequence.failure, sequence.connection) },
    diagnosis: diagnosisLine(summary),
  };
}

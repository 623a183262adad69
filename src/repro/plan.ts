// What a reproducer needs from a run folder, as one JSON-able plan: the request sequence, the body fields, the
// deadlines, where the run sent its requests, and what failed. Built from run.json (the workload, redacted),
// summary.json (the diagnosis) and the picked sequence; no secret and no message text goes in.
import { join } from 'node:path';
import { resolveTools, toolsPayload } from '../agent/index.js';
import { REDACTED, isPublicHeader, maskExtraBody, type ToolSpec } from '../config/index.js';
import type { Summary } from '../analysis/index.js';
import type { RunManifest } from '../results/index.js';
import { RecordError } from '../errors.js';
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
  /** `target.headers` whose values are public (by the allow-list); the others are in `secret_headers`. */
  headers: Record<string, string>;
  /** Headers whose values are secret: the scripts read each from the environment variable `env`, never the file. */
  secret_headers: SecretField[];
  /** Fields of `extra_body` whose values are secret: a body holds the placeholder `${ENV}` (a JSON string) where
   * the value was, which the scripts replace with the variable's value. */
  secret_body: SecretField[];
  deadlines: ReproDeadlines;
  connection: string | null;
  requests: ReproRequest[];
  failure: ReproFailure & { description: string };
  /** summary.json's diagnosis in one line, or null without a summary. */
  diagnosis: string | null;
}

/** A secret value the reproducer takes from the environment: the header's name or the body field's path. */
export interface SecretField {
  name: string;
  env: string;
}

/** `ROUNDLOAD_HEADER_X_API_KEY` for `x-api-key`: upper case, every run of other characters one `_`. */
export function secretEnvName(prefix: 'HEADER' | 'EXTRA', parts: readonly string[]): string {
  return `ROUNDLOAD_${prefix}_${parts
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')}`;
}

/** What a body holds where a secret was: `${ROUNDLOAD_EXTRA_SESSION_KEY}`. */
export const placeholder = (env: string): string => `\${${env}}`;

function section(workload: Record<string, unknown>, key: string): Record<string, unknown> {
  const v = workload[key];
  return isObject(v) ? v : {};
}

function num(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** Every body field but `messages`, as the run's agents sent them (src/agent/conversation.ts), `extra_body` with
 * its secrets as placeholders. */
function bodyHead(manifest: RunManifest, extraBody: Record<string, unknown>): Record<string, unknown> {
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
  for (const [key, value] of Object.entries(extraBody)) head[key] = value;
  return head;
}

function names(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** `extra_body` with every secret (by the allow-list, or masked in run.json) replaced by its placeholder. */
function extraBody(manifest: RunManifest): { body: Record<string, unknown>; secrets: SecretField[] } {
  const target = section(manifest.workload, 'target');
  const secrets = new Map<string, SecretField>();
  const hide = (path: string[]): string => {
    const env = secretEnvName('EXTRA', path);
    secrets.set(env, { name: path.join('.'), env });
    return placeholder(env);
  };
  // Belt and braces: run.json of this version masks the same strings; one written before kept some.
  const masked = maskExtraBody(section(target, 'extra_body'), names(target.public_extra_body), hide);
  const walk = (value: unknown, path: string[]): unknown => {
    if (value === REDACTED || (typeof value === 'string' && value.includes('***'))) return hide(path);
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, String(i)]));
    if (!isObject(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]));
  };
  return { body: walk(masked, []) as Record<string, unknown>, secrets: [...secrets.values()] };
}

/** `value`, which goes into a line of curl's config (a header, a URL): a control character in it (a line break
 * would start a directive of its own) is a RecordError, as the schema and the transport never let one through. */
function oneLineOnly(folder: string, field: string, value: string): string {
  if (/\p{Cc}/u.test(value)) throw new RecordError(join(folder, 'run.json'), 0, field, 'holds a control character (a line break?)');
  return value;
}

// The schema's rule for target.headers names: a run.json that breaks it was not written by roundload.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function headers(folder: string, manifest: RunManifest): { headers: Record<string, string>; secrets: SecretField[] } {
  const target = section(manifest.workload, 'target');
  const publicNames = names(target.public_headers);
  const out: Record<string, string> = {};
  const secrets: SecretField[] = [];
  for (const [name, value] of Object.entries(section(target, 'headers'))) {
    if (!HEADER_NAME.test(name)) throw new RecordError(join(folder, 'run.json'), 0, 'workload.target.headers', 'has a name that is not an HTTP header name');
    // Belt and braces: run.json masks every header not on the allow-list; one written before did not.
    if (isPublicHeader(name, publicNames) && typeof value === 'string' && !value.includes(REDACTED) && !value.includes('***'))
      out[name] = oneLineOnly(folder, `workload.target.headers.${name}`, value);
    else secrets.push({ name, env: secretEnvName('HEADER', [name]) });
  }
  return { headers: out, secrets };
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
  const id = f.request_id === null ? '' : `; request id ${JSON.stringify(f.request_id)}`;
  return `request ${f.request} of the sequence, ${socket}, sent ${f.t}: ${what}${id}`;
}

/** summary.json's diagnosis as one line: `diagnosis: proxy (0.80): <first evidence>`. A summary of another
 * version may lack it, or parts of it: read as written. */
export function diagnosisLine(summary: Summary | null): string | null {
  const d: unknown = summary?.diagnosis;
  if (!isObject(d)) return null;
  const confidence = typeof d.confidence === 'number' ? ` (${d.confidence.toFixed(2)})` : '';
  const first = Array.isArray(d.evidence) && typeof d.evidence[0] === 'string' ? `: ${d.evidence[0]}` : '';
  return `diagnosis: ${String(d.verdict)}${confidence}${first}`;
}

/** What the plan is made of: the folder's files as read, and the picked sequence. */
export interface PlanInputs {
  folder: string;
  manifest: RunManifest;
  /** summary.json, or null when the run has none. */
  summary: Summary | null;
  sequence: ReproSequence;
  version: string;
}

export function buildPlan({ folder, manifest, summary, sequence, version }: PlanInputs): ReproPlan {
  const route = manifest.route;
  const conversation = section(manifest.workload, 'conversation');
  const h = headers(folder, manifest);
  const extra = extraBody(manifest);
  return {
    generated_by: `roundload ${version}`,
    run: { folder, name: manifest.name, status: manifest.status, started_at: manifest.started_at, path: manifest.path, replayed_trace: isObject(manifest.workload.replay) },
    target: oneLineOnly(folder, 'route.request_url', route?.request_url ?? manifest.target.url),
    endpoint: '/v1/chat/completions',
    proxy: typeof route?.connect_proxy === 'string' ? oneLineOnly(folder, 'route.connect_proxy', route.connect_proxy) : null,
    insecure: manifest.target.tls_insecure,
    headers: h.headers,
    secret_headers: h.secrets,
    secret_body: extra.secrets,
    deadlines: deadlines(manifest),
    head: bodyHead(manifest, extra.body),
    system_chars: 4 * num(conversation.system_prompt_tokens, 0),
    connection: sequence.connection,
    requests: sequence.requests,
    failure: { ...sequence.failure, description: describeFailure(sequence.failure, sequence.connection) },
    diagnosis: diagnosisLine(summary),
  };
}

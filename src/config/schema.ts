// The workload file's schema: every field, its type, its default and its meaning, in one place.
// Validation rejects unknown keys (strict objects) so a typo never passes silently.
import { z } from 'zod';
import { engineSchema } from './engine-settings.js';
import { monitorSchema } from './monitor.js';
import { parseDurationMs } from '../util/index.js';
import { clip } from '../util/index.js';
import { checkBounds, largestContextTokens, refineIssues, MAX_DURATION_MS, MAX_TOKENS, MAX_WINDOWS } from './bounds.js';
import { closest } from './suggest.js';
import { WARNING_CLASS_NAMES } from '../types/index.js';

export { engineSchema } from './engine-settings.js';

const int = () => z.number().int();
const nonNegative = () => z.number().min(0);
const positiveInt = () => int().min(1);
const nullableString = () => z.string().min(1).nullable();

const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

/** One fault of the built-in hop, in a workload (`target.via.faults`) or on the command line
 * (`roundload hop --fault kind:key=value,…`). Each applies to every connection unless it says otherwise. */
export const hopFaultSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    /** Stall a reused client connection: after it has carried `after_requests` requests, the next ones on it
     * (a seeded `ratio` of them) are read but never forwarded nor answered (the response never starts). */
    kind: z.literal('stall'),
    /** Requests a client connection is served normally before it stalls. @default 1 */
    after_requests: positiveInt().default(1),
    /** Share of the requests past `after_requests` that stall, 0 to 1, chosen seeded per request (the others
     * go through): a hop stalling some of the requests while the rest flow. Absent: every one, as before the
     * share existed (a workload's parsed faults and the hop's `faults:` line unchanged). @default 1 */
    ratio: z.number().min(0).max(1).optional(),
    /** Seed of the choice, so the same requests stall run after run. @default 1 */
    seed: int().min(0).optional(),
  }),
  z.strictObject({
    /** Stop forwarding a streamed response after `after_chunks` SSE events, keeping the socket open. */
    kind: z.literal('cut'),
    /** SSE events (`data:` blocks) forwarded before the hop goes silent. @default 3 */
    after_chunks: int().min(0).default(3),
  }),
  z.strictObject({
    /** Buffer the whole response body and deliver it at the end (headers go at once), like a proxy with
     * response buffering on. */
    kind: z.literal('buffer'),
  }),
  z.strictObject({
    /** Drop a client connection that has been idle `after_s` seconds. */
    kind: z.literal('idle_close'),
    /** Idle time before the drop. @default 5 */
    after_s: z.number().positive().default(5),
    /** `silent`: stop reading and answering but keep the TCP socket (half-open from the client's view: its next
     * request is never answered); `rst`: reset the socket (TCP RST). @default "silent" */
    mode: z.enum(['silent', 'rst']).default('silent'),
  }),
  z.strictObject({
    /** Reset (TCP RST) a seeded share of client connections when their first request arrives. */
    kind: z.literal('reset'),
    /** Share of connections reset, 0 to 1. @default 0.1 */
    ratio: z.number().min(0).max(1).default(0.1),
    /** Seed of the choice, so the same connections are reset run after run. @default 1 */
    seed: int().min(0).default(1),
  }),
  z.strictObject({
    /** Hold every request this long before forwarding it upstream. */
    kind: z.literal('latency'),
    /** Added delay. @default 100 */
    ms: nonNegative().default(100),
    /** Up to this much more, seeded per request. @default 0 */
    jitter_ms: nonNegative().default(0),
  }),
]);
export type HopFault = z.output<typeof hopFaultSchema>;

/** The network path to the target (`target.via`). */
export const viaSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    /** An HTTP CONNECT proxy (`http://` or `https://`); TLS to the target runs inside the tunnel. */
    kind: z.literal('connect'),
    url: httpUrl(),
  }),
  z.strictObject({
    /** The built-in TLS hop, started on 127.0.0.1 in front of the target; requests trust its CA. */
    kind: z.literal('hop'),
    /** Faults the hop injects. @default [] */
    faults: z.array(hopFaultSchema).default([]),
  }),
  z.strictObject({
    /** Your own TLS reverse proxy (nginx, envoy…) in front of the target: requests go to `url` (with
     * `target.tls`), while `target.url` stays the engine, reached directly by canaries. */
    kind: z.literal('tls-proxy'),
    url: httpUrl(),
  }),
]);

/** Request-body fields roundload sets itself, and where a workload sets them instead: `target.extra_body`
 * may not name them. */
export const RESERVED_BODY_KEYS: Readonly<Record<string, string>> = {
  model: 'roundload sets it from target.model',
  messages: 'roundload builds the conversation',
  stream: 'roundload always streams',
  stream_options: 'roundload sets it from conversation.include_usage',
  max_tokens: 'roundload sets it from conversation.max_tokens',
  max_completion_tokens: 'roundload sends max_tokens, from conversation.max_tokens',
  temperature: 'roundload sets it from conversation.temperature',
  tools: 'roundload sets it from conversation.tools',
  tool_choice: 'roundload sets it from conversation.tool_choice',
  n: 'roundload reads one choice per answer',
};

/** Headers roundload (or HTTP itself) owns: `target.headers` may not set them. */
const RESERVED_HEADERS: Readonly<Record<string, string>> = {
  authorization: 'the API key goes in target.api_key_env (the name of an environment variable), never in the workload',
  'content-type': 'roundload sends application/json',
  accept: 'roundload asks for text/event-stream',
  'content-length': 'HTTP sets it',
  'transfer-encoding': 'HTTP sets it',
  connection: "the connection is roundload's (agents.connection, agents.keep_alive_timeout_ms)",
  'keep-alive': "the connection is roundload's (agents.keep_alive_timeout_ms)",
  upgrade: 'HTTP sets it',
  expect: 'HTTP sets it',
  te: 'HTTP sets it',
};

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `target.headers`: names checked once here (reserved ones, case-insensitive twins), values as strings. */
const headersSchema = z
  .record(z.string().regex(HEADER_NAME, 'must be an HTTP header name (letters, digits and -, no spaces)'), z.union([z.string(), z.number(), z.boolean()]).transform(String))
  .default({})
  .superRefine((headers, ctx) => {
    const seen = new Map<string, string>();
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      const why = (Object.hasOwn(RESERVED_HEADERS, lower) ? RESERVED_HEADERS[lower] : undefined) ?? (lower.startsWith('x-roundload-') ? "x-roundload-* headers are roundload's own" : undefined);
      if (why !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `${name} cannot be set here: ${why}` });
      const twin = seen.get(lower);
      if (twin !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `${name} is given twice (also as ${twin}); header names are case-insensitive` });
      seen.set(lower, name);
      if (/[\r\n\0]/.test(value)) ctx.addIssue({ code: 'custom', path: [name], message: 'a header value must not contain a line break or NUL' });
    }
  });

/** Where the requests go. */
export const targetSchema = z.strictObject({
  /** Base URL of the OpenAI-compatible server (router or engine), `http://` or `https://`.
   * `null` starts the embedded engine on 127.0.0.1 and targets it. @default null */
  url: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .nullable()
    .default(null),
  /** Model name sent in every request. @default "deepseek-v4-flash" */
  model: z.string().min(1).default('deepseek-v4-flash'),
  /** Name of the environment variable holding the API key (sent as `Authorization: Bearer`).
   * The key itself never appears in a workload, results or logs. @default null */
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .nullable()
    .default(null),
  /** TLS settings for an https target. */
  tls: z
    .strictObject({
      /** PEM file of the CA that signed the server's certificate (added to Node's trusted roots). @default null */
      ca: nullableString().default(null),
      /** Skip certificate verification. Off unless you ask; every request record says so. @default false */
      insecure: z.boolean().default(false),
      /** SNI / certificate name to verify, when it differs from the URL's host. @default null */
      servername: nullableString().default(null),
    })
    .prefault({}),
  /** What stands between roundload and `url`: `null` (requests go straight to it), a CONNECT proxy, the
   * built-in TLS hop (started in front of the target, with optional faults), or your own TLS reverse proxy.
   * See README, "Paths". @default null */
  via: viaSchema.nullable().default(null),
  /** A direct URL of the engine, around any proxy, for canaries (`monitor.canary_interval_s`). With
   * `via: {kind: hop}` or `{kind: tls-proxy}` it defaults to the target itself (the embedded engine's URL
   * when `url` is null). @default null */
  bypass: httpUrl().nullable().default(null),
  /** Fields merged into every chat request body (agents, canaries, the preflight), as a deployment needs them:
   * `chat_template_kwargs: {thinking: true}`, `separate_reasoning`, `reasoning_effort`, `top_p`, routing
   * fields… A field roundload sets itself (`model`, `messages`, `stream`, `max_tokens`…) is an error naming
   * where to set it. @default {} */
  extra_body: z
    .record(z.string(), z.unknown())
    .default({})
    .superRefine((body, ctx) => {
      for (const key of Object.keys(body)) {
        const why = Object.hasOwn(RESERVED_BODY_KEYS, key) ? RESERVED_BODY_KEYS[key] : undefined;
        if (why !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} cannot be set in extra_body: ${why}` });
      }
    }),
  /** Where each agent request carries its id (`rl-<tag>-<conversation>-r<round>-<n>`, the record's
   * `request_id`), so a hang is found in the engine's log by it. `header`: sent as `X-Request-Id` (harmless to
   * any server). `body_field`: the body field SGLang takes it in (`rid`), or null; `auto` sends `rid` to the
   * embedded engine only, as a server that refuses unknown fields (OpenAI's API) would answer 400.
   * @default {header: true, body_field: auto} */
  request_id: z
    .object({
      header: z.boolean().default(true),
      body_field: z
        .union([z.literal('auto'), z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain field name')])
        .nullable()
        .default('auto'),
    })
    .strict()
    .default({ header: true, body_field: 'auto' }),
  /** HTTP headers sent with every chat request (agents, canaries, the preflight): routing keys,
   * `X-Session-Id`… `User-Agent` defaults to `roundload/<version>` and may be replaced here. `Authorization`
   * is refused (the key goes in `api_key_env`). Every value is treated as a secret (masked in results,
   * reports, the terminal, the dashboard and reproducers) unless its header is known to be public
   * (`User-Agent`, `Accept-Encoding`, `Accept-Language`, `Cache-Control`, `X-Request-Id`) or named in
   * `public_headers`. @default {} */
  headers: headersSchema,
  /** Names of `headers` whose values are not secret and may be written as they are (run.json, reports,
   * reproducers): `[X-Session-Id, X-Tenant]`. Case-insensitive; each must be a header of `headers`.
   * @default [] */
  public_headers: z.array(z.string().regex(HEADER_NAME, 'must be an HTTP header name')).default([]),
  /** Top-level keys of `extra_body` whose values are not secret and are written as they are (run.json, reports,
   * reproducers): `[routing, lora_path]`. Every other string of `extra_body`, at any depth, is a secret, but the
   * settings of known request options (`reasoning_effort`, `top_p`, `chat_template_kwargs.enable_thinking`…:
   * PUBLIC_BODY_OPTIONS, src/types/body-options.ts). Each must be a key of `extra_body`. @default [] */
  public_extra_body: z.array(z.string().min(1)).default([]),
});

/** `public_headers` and `public_extra_body` name what is there: a typo would leave a value masked, or a
 * public list that says nothing. */
function publicNameIssues(target: z.output<typeof targetSchema>, ctx: z.RefinementCtx): void {
  const headers = new Set(Object.keys(target.headers).map((name) => name.toLowerCase()));
  target.public_headers.forEach((name, i) => {
    if (!headers.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: ['target', 'public_headers', i], message: `${name} is not a header of target.headers` });
  });
  target.public_extra_body.forEach((key, i) => {
    if (!Object.hasOwn(target.extra_body, key)) ctx.addIssue({ code: 'custom', path: ['target', 'public_extra_body', i], message: `${key} is not a key of target.extra_body` });
  });
}

/** A length of time: `30s`, `2m`, `8h`, or a number of seconds; longer than 0. */
const durationValue = z.union([z.string(), z.number()]).superRefine((value, ctx) => {
  try {
    const ms = parseDurationMs(value);
    if (ms <= 0) ctx.addIssue({ code: 'custom', message: 'must be longer than 0' });
    else if (!(ms <= MAX_DURATION_MS)) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_DURATION_MS / 86_400_000} days, got ${clip(JSON.stringify(value))}` });
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
  }
});
const durationSchema = durationValue.nullable();

/** Open-loop load (`agents.arrival`): conversations start at a rate, whatever the server's state, instead of
 * `agents.count` agents each starting its next conversation when the last one ends. */
export const arrivalSchema = z.strictObject({
  /** Conversations started per second over `duration` (the mean, under `poisson`). `null` only with
   * `agents.stages`, whose stages give the rates. @default null */
  rate_per_s: z.number().positive().max(100_000).nullable().default(null),
  /** `poisson`: exponential gaps between starts (independent arrivals, as real sessions come); `constant`:
   * evenly spaced starts. @default "poisson" */
  distribution: z.enum(['poisson', 'constant']).default('poisson'),
  /** Most conversations running at once. An arrival that finds this many running is `delayed`: it waits for
   * a slot, first come first served, and its start lag grows; it is never dropped. @default 256 */
  max_active: positiveInt().max(100_000).default(256),
});
export type ArrivalSettings = z.output<typeof arrivalSchema>;

/** One stage of `agents.stages`: a length and a level, either an arrival rate (open loop) or a number of agents. */
export const stageSchema = z.strictObject({
  /** Length of the stage (`30s`, `2m`; a number is seconds). */
  duration: durationValue,
  /** Conversations started per second in this stage (open loop; `agents.arrival` gives the distribution and
   * `max_active`). 0: a pause. */
  rate_per_s: nonNegative().max(100_000).optional(),
  /** Agents running in this stage (closed loop, like `agents.count`). 0: a pause. */
  count: int().min(0).max(100_000).optional(),
});

/** The agent workers. */
export const agentsSchema = z.strictObject({
  /** Number of concurrent agents, each one conversation at a time. @default 4 */
  count: positiveInt().max(100_000).default(4),
  /** Rounds (requests) per conversation. @default 8 */
  rounds: positiveInt().max(100_000).default(8),
  /** Pause between a response and the agent's next request, like a harness running tools. @default 100 */
  think_time_ms: nonNegative().default(100),
  /** Agents start spread over this window instead of all at once. @default 0 */
  start_stagger_ms: nonNegative().default(0),
  /** `per-agent`: every agent has its own keep-alive connection (like a harness process);
   * `pool`: all agents share one pool of `pool_connections` connections. @default "per-agent" */
  connection: z.enum(['per-agent', 'pool']).default('per-agent'),
  /** Size of the shared pool in `pool` mode; `null` means one per agent. @default null */
  pool_connections: positiveInt().nullable().default(null),
  /** How long the client keeps an idle connection open for reuse (a server's shorter
   * `Keep-Alive: timeout` hint wins). @default 60000 */
  keep_alive_timeout_ms: positiveInt().default(60_000),
  /** Worker threads the agents are spread over: 1 runs them on the main thread; `auto` adds a thread per
   * 256 agents up to the cores less one. More threads keep timings honest when one event loop cannot keep
   * up (about 20-30k SSE events/s a core). @default 1 */
  workers: z.union([positiveInt().max(256), z.literal('auto')]).default(1),
  /** Open-loop load: conversations arrive at `rate_per_s` instead of `count` agents looping (README,
   * "Arrival rates and stages"). `null`: closed loop. @default null */
  arrival: arrivalSchema.nullable().default(null),
  /** The run as stages one after another, each a phase (`s1-r0.5`, `s2-r2` for rates; `s1-c4` for agent
   * counts), each with its own length and level: every stage gives `rate_per_s` (open loop) or every stage
   * gives `count` (closed loop). Replaces `duration`. `null`: one phase, `main`. @default null */
  stages: z.array(stageSchema).min(1).max(1000).nullable().default(null),
  /** How the level moves between stages: `step` jumps to each stage's level at its start; `linear` moves
   * from the previous stage's level (0 before the first) to this stage's, reached at its end. @default "step" */
  ramp: z.enum(['step', 'linear']).default('step'),
});

const toolSchema = z.strictObject({
  /** Function name the model may call. */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  /** Description sent to the model. @default "" */
  description: z.string().default(''),
  /** JSON schema of the arguments. @default {"type":"object","properties":{}} */
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
});
export type ToolSpec = z.output<typeof toolSchema>;

/** How each conversation is made and grows. Sizes are in tokens (about 4 characters each). */
export const conversationSchema = z.strictObject({
  /** Seed of all generated content; the same seed gives the same conversations. @default 1 */
  seed: int().min(0).default(1),
  /** Size of the system prompt, shared by every agent (a cross-agent cached prefix). @default 1200 */
  system_prompt_tokens: int().min(0).default(1200),
  /** Size of the first user message (the task). @default 200 */
  first_user_tokens: positiveInt().default(200),
  /** Size of a user turn appended after a plain-content answer. @default 60 */
  user_turn_tokens: positiveInt().default(60),
  /** Size of one tool result in round 1. @default 150 */
  tool_result_tokens: positiveInt().default(150),
  /** Added to the tool result size every round, so context grows faster as work goes on. @default 50 */
  tool_result_growth_tokens: int().min(0).default(50),
  /** `max_tokens` of every request. @default 256 */
  max_tokens: positiveInt().default(256),
  /** Tools offered to the model: `default` (read_file, run_command, search_code), `none`, or a list. @default "default" */
  tools: z.union([z.enum(['default', 'none']), z.array(toolSchema).min(1)]).default('default'),
  /** `tool_choice` of every request. @default "auto" */
  tool_choice: z.enum(['auto', 'required', 'none']).default('auto'),
  /** Ask for a final usage chunk (`stream_options.include_usage`). Without it token counts are estimated and marked so. @default true */
  include_usage: z.boolean().default(true),
  /** Sampling temperature sent. @default 0 */
  temperature: nonNegative().max(2).default(0),
  /** Context cap: a conversation whose request body reaches this size (estimated at 4 characters per token)
   * ends, and in a `duration` run the agent starts a fresh one. `null`: no cap. @default null */
  max_context_tokens: positiveInt().nullable().default(null),
  /** What becomes of the reasoning a reasoning model streamed (`reasoning_content`): `keep` sends it back on
   * the assistant message in the history, as DeepSeek's thinking-mode guide requires for tool-call turns (its
   * API answers 400 without it), so requests grow by it; `drop` leaves it out, like a harness that discards
   * it. @default "keep" */
  reasoning_history: z.enum(['keep', 'drop']).default('keep'),
});

/** Per-request deadlines. A request past any of them is a hang. */
export const watchdogSchema = z.strictObject({
  /** From send to a connected socket. @default 10000 */
  connect_ms: positiveInt().default(10_000),
  /** From send to response headers. @default 60000 */
  headers_ms: positiveInt().default(60_000),
  /** From send to the first content, reasoning or tool-call token. @default 120000 */
  first_token_ms: positiveInt().default(120_000),
  /** Longest silence (no bytes at all) while streaming. @default 30000 */
  stall_ms: positiveInt().default(30_000),
  /** Whole request, send to end of stream. @default 600000 */
  total_ms: positiveInt().default(600_000),
  /** What a hang does: `abort` the request (recorded `hang`) and go on with the next round; `abort-agent`:
   * the same, then that agent stops; `wait`: record the hang event when the deadline passes but keep the
   * request open until `total_ms`, to watch it develop (the record still says `hang`). @default "abort" */
  on_hang: z.enum(['abort', 'abort-agent', 'wait']).default('abort'),
});
export type HangPolicy = z.output<typeof watchdogSchema>['on_hang'];

/** How the results files are written. */
export const resultsSchema = z.strictObject({
  /** A JSONL file (requests, events, gauges) past this size is closed as a numbered part
   * (`requests.1.jsonl`, `requests.2.jsonl`…) and a fresh one started; `null`: never rotate. @default 256 */
  max_file_mb: z.number().positive().nullable().default(256),
  /** Gzip closed parts in the background (`requests.1.jsonl.gz`). @default true */
  compress_rotated: z.boolean().default(true),
  /** A history database (SQLite file, created when missing, relative to the working directory) the run is
   * appended to once summary.json is written; `roundload run --history FILE` sets it. A failure to write it is
   * a warning, never the run's failure. `null`: no history. @default null */
  history: z.string().min(1).nullable().default(null),
});

/** Pass/fail limits checked at the end of a run; any failure makes exit code 1 and a failing JUnit case. Beside
 * them one check is always on: a run where no request ended ok fails (`ok_requests`). */
export const thresholdsSchema = z.strictObject({
  /** Most hung requests allowed; `null`: hangs never fail the run. @default 0 */
  hangs: int().min(0).nullable().default(0),
  /** Highest share of requests that ended in error (0.01 = 1%). Hangs are not counted here (`hangs` checks
   * them), nor requests the run's own stop aborted. `null`: errors never fail the run (a run with no ok
   * request still does: that check is always on). @default 0.01 */
  error_rate: z.number().min(0).max(1).nullable().default(0.01),
  /** Highest time-to-first-token p99 over the whole run (first token of any kind, reasoning included). @default null */
  ttft_p99_ms: z.number().positive().nullable().default(null),
  /** Highest time-to-first-content p99 over the whole run (first content or tool-call token: reasoning not
   * counted). @default null */
  ttfc_p99_ms: z.number().positive().nullable().default(null),
  /** Highest inter-token gap p99 over the whole run. @default null */
  itl_p99_ms: z.number().positive().nullable().default(null),
  /** Highest end-to-end p99 over the whole run. @default null */
  e2e_p99_ms: z.number().positive().nullable().default(null),
  /** Lowest output (decode) tokens per second of all streams together. @default null */
  decode_tokens_per_s_min: nonNegative().nullable().default(null),
  /** Highest share of streams that arrived whole (`buffered_stream`: all their tokens at once, something on
   * the path buffering them), of those long enough to tell (0.1 = 10%). @default null */
  buffered_streams: z.number().min(0).max(1).nullable().default(null),
  /** Highest share of ok answers with a warning (`tool_markup_in_content`, `wrapped_tool_arguments`…, 0.01 =
   * 1%): one share for any warning, or a mapping of warning class to its own share (`{tool_markup_in_content:
   * 0, tool_call_without_name: 0.001}`; classes not listed are not checked). `null`: warnings never fail the
   * run. @default null */
  answer_warnings: z
    .union([z.number().min(0).max(1), z.record(z.string(), z.number().min(0).max(1))])
    .nullable()
    .default(null)
    .superRefine((limits, ctx) => {
      if (limits === null || typeof limits === 'number') return;
      for (const key of Object.keys(limits)) {
        if ((WARNING_CLASS_NAMES as readonly string[]).includes(key)) continue;
        const guess = closest(key, WARNING_CLASS_NAMES);
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `unknown warning class "${key}"${guess === undefined ? `; the classes: ${WARNING_CLASS_NAMES.join(', ')}` : ` (did you mean "${guess}"?)`}`,
        });
      }
    }),
  /** Also check every `window_s` window (hangs, error rate, ttft/e2e p99, tokens/s), so a bad hour of a
   * night fails even when the night's totals pass. @default false */
  per_window: z.boolean().default(false),
});

/** The client's own Prometheus endpoint (requests in flight, completed, hangs, errors, latencies). */
export const clientMetricsSchema = z.strictObject({
  /** Port to serve `/metrics` on during the run (0: any free port, printed at start); `null`: off. @default null */
  port: int().min(0).max(65_535).nullable().default(null),
  /** Address to listen on; loopback unless you ask (`0.0.0.0` in a pod; then any Host header is answered).
   * `--metrics-host` sets it. @default "127.0.0.1" */
  host: z.string().min(1).default('127.0.0.1'),
  /** After the run, keep `/metrics` up this many seconds (with the final values and verdicts) for a last
   * scrape; a stop by signal cuts it short. `--metrics-linger` sets it. @default 0 */
  linger_s: nonNegative().max(300).default(0),
  /** Push the run's series to this Prometheus remote-write URL (`http://prometheus:9090/api/v1/write`;
   * credentials in the URL become Basic authentication) every `remote_write_interval_s` while the run goes and
   * once at its end; a failed push is retried with backoff and, in the end, a warning, never the run's.
   * `null`: no push. `--remote-write` sets it. @default null */
  remote_write_url: httpUrl().nullable().default(null),
  /** How long one push may take before it is given up (and retried); the end's last push and flush take no
   * longer either. @default 10 */
  remote_write_timeout_s: nonNegative().min(0.1).max(300).default(10),
  /** Time between pushes while the run goes: each carries the snapshot taken then and whatever is still
   * queued. At most 600 (a Prometheus refuses samples about an hour old). @default 10 */
  remote_write_interval_s: nonNegative().min(1).max(600).default(10),
});

/** `{trace_id}` in a template: what a trace link puts each request's trace id in place of. */
export const TRACE_ID_PLACEHOLDER = '{trace_id}';

/** A link template for trace ids: an http(s) URL once `{trace_id}` is filled in (checked with a sample id). */
const traceUrlTemplate = () =>
  z
    .string()
    .min(1)
    .refine((t) => t.includes(TRACE_ID_PLACEHOLDER), { message: `must contain ${TRACE_ID_PLACEHOLDER}, e.g. https://tempo.example/trace/{trace_id}` })
    .refine(
      (t) => {
        try {
          return /^https?:$/.test(new URL(t.replaceAll(TRACE_ID_PLACEHOLDER, '0af7651916cd43dd8448eb211c80319c')).protocol);
        } catch {
          return false;
        }
      },
      { message: 'must be an http:// or https:// URL once {trace_id} is filled in' },
    );

/** The name of an environment variable (`OTEL_EXPORTER_OTLP_HEADERS`). */
const envName = () => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable');

/** OTLP export of the run's spans (docs/tracing.md). Each field left null falls back to the environment
 * variable every OpenTelemetry SDK reads, then to the SDK's default. */
export const otlpSchema = z.strictObject({
  /** Base URL of an OTLP/HTTP receiver (`http://collector:4318`); `/v1/traces` is appended. null:
   * `OTEL_EXPORTER_OTLP_ENDPOINT`. With neither this nor `traces_endpoint` (nor their variables), no export.
   * `--otlp-endpoint` sets it. @default null */
  endpoint: httpUrl().nullable().default(null),
  /** The full traces URL, taken as is (wins over `endpoint`). null: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
   * `--otlp-traces-endpoint` sets it. @default null */
  traces_endpoint: httpUrl().nullable().default(null),
  /** `http/protobuf` or `http/json`. null: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, then
   * `OTEL_EXPORTER_OTLP_PROTOCOL`, then `http/protobuf` (gRPC is not spoken). `--otlp-protocol` sets it. @default null */
  protocol: z.enum(['http/protobuf', 'http/json']).nullable().default(null),
  /** The environment variable holding the export's headers as `key=value,key2=value2` (an API key: never
   * written anywhere). null: `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, then `OTEL_EXPORTER_OTLP_HEADERS`. @default null */
  headers_env: envName().nullable().default(null),
  /** `service.name` of roundload's spans. null: `OTEL_SERVICE_NAME`, then `roundload`. @default null */
  service_name: z.string().min(1).max(200).nullable().default(null),
  /** Resource attributes of roundload's spans, over those of `OTEL_RESOURCE_ATTRIBUTES`. @default {} */
  resource_attributes: z.record(z.string().min(1).max(200), z.string().max(1000)).default({}),
  /** The embedded engine (when the run starts one) exports its router, prefill and decode spans to the same
   * receiver, each server its own `service.name`. @default true */
  engine: z.boolean().default(true),
  /** Spans waiting to be sent at most; past it new spans are dropped and counted (summary.json
   * `tracing.dropped`): a dead collector costs spans, never the run's memory or latency. @default 8192 */
  max_queue_spans: positiveInt().max(1_000_000).default(8192),
  /** Spans in one export request at most. @default 512 */
  max_batch_spans: positiveInt().max(10_000).default(512),
  /** Time between exports while spans wait. @default 1 */
  interval_s: z.number().min(0.05).max(60).default(1),
  /** One export request is given up after this long (`OTEL_EXPORTER_OTLP_TIMEOUT` is 10 s too). @default 10 */
  timeout_s: z.number().min(0.1).max(300).default(10),
  /** At the end, spans still queued are sent for at most this long, then counted as dropped. @default 5 */
  flush_timeout_s: z.number().min(0).max(300).default(5),
});

/** W3C trace context on every request, links to a trace viewer, and OTLP export of the run's spans. */
export const tracingSchema = z.strictObject({
  /** Send a W3C `traceparent` with every request: a fresh trace id and span id each, sampled. The record keeps
   * them (`trace_id`, `span_id`) either way. @default true */
  traceparent: z.boolean().default(true),
  /** A link template for trace ids: `https://tempo.example/trace/{trace_id}`; report.html and the live
   * dashboard make each trace id a link to it. `--trace-url` sets it. @default null */
  trace_url: traceUrlTemplate().nullable().default(null),
  otlp: otlpSchema.prefault({}),
});

/** A concurrency sweep: the run becomes one phase per level (`c64`, `c96`…), run one after another, each
 * with a warm-up left out of its figures. */
export const sweepSchema = z.strictObject({
  /** Agent counts, one phase per level in this order; each level replaces `agents.count` for its phase. */
  agents: z.array(positiveInt().max(100_000)).min(1),
  /** First seconds of each phase: requests sent then are recorded with `warmup: true` and left out of the
   * phase's figures; the time windows they overlap are not steady and comparisons skip them. @default 5 */
  warmup_s: nonNegative().max(86_400).default(5),
  /** Length of each phase (`30s`, `2m`; a number is seconds): agents start a fresh conversation whenever one
   * ends, and at the end send no more (in-flight requests finish). `null`: a phase ends when every agent has
   * done its `agents.rounds` rounds. @default null */
  phase_duration: durationSchema.default(null),
});

/** Replaying a recorded trace (`roundload record`, `roundload trace import`) instead of generating
 * conversations: each recorded conversation becomes an agent sending its rounds with the recorded shapes and
 * think times (docs/replay.md). */
export const replaySchema = z.strictObject({
  /** The trace file (JSONL), relative to the working directory. `roundload run --replay FILE` sets it. */
  file: z.string().min(1),
  /** Time scale: 2 replays twice as fast (think times, idle gaps and start offsets halved). @default 1 */
  speed: z.number().positive().max(1000).default(1),
  /** Start the trace over when every conversation has ended, until `duration` is up or the run stops. @default false */
  loop: z.boolean().default(false),
  /** Replay every recorded conversation (`all`) or the first N to start. @default "all" */
  conversations: z.union([z.literal('all'), positiveInt()]).default('all'),
  /** `as-recorded`: each recorded client connection is one connection here, carrying the same requests in the
   * same order, so sockets are reused (and sit idle) as the harness's did; `per-agent`: one connection per
   * conversation; `pool`: one shared pool of `agents.pool_connections`. @default "as-recorded" */
  connection: z.enum(['as-recorded', 'per-agent', 'pool']).default('as-recorded'),
  /** Model name to send instead of the recorded one (null: as recorded, or `target.model` when the trace has
   * none). @default null */
  model: nullableString().default(null),
  /** `server`: size each request's synthetic text so the server counts the recorded prompt tokens — its
   * tokenize endpoint when it has one, then each answer's usage, per conversation; `characters`: the recorded
   * characters, whatever the server counts (docs/replay.md). A `--content` trace is sent verbatim either way.
   * @default "server" */
  sizing: z.enum(['server', 'characters']).default('server'),
});
export type ReplaySettings = z.output<typeof replaySchema>;

/** The bad combinations of `agents.arrival`, `agents.stages`, `duration`, `sweep` and `replay`, and stages
 * too long in all (their sum is the run's length, bound like `duration`). */
function loadIssues(w: { agents: z.output<typeof agentsSchema>; duration: string | number | null; sweep: unknown; replay: unknown; window_s: number | 'auto' }, ctx: z.RefinementCtx): void {
  const { arrival, stages } = w.agents;
  const issue = (path: (string | number)[], message: string): void => ctx.addIssue({ code: 'custom', path, message });
  if (w.sweep !== null && arrival !== null) issue(['agents', 'arrival'], 'a sweep runs levels of agents; for rates in steps use agents.stages with rate_per_s instead of sweep');
  if (w.sweep !== null && stages !== null) issue(['agents', 'stages'], 'set either sweep or agents.stages, not both (stages of agent counts: agents.stages with count)');
  if (w.replay !== null && (arrival !== null || stages !== null))
    issue(['agents', arrival !== null ? 'arrival' : 'stages'], 'a replay sends the recorded conversations at their recorded times; it cannot be combined with agents.arrival or agents.stages');
  if (stages === null) {
    if (arrival === null) return;
    if (arrival.rate_per_s === null) issue(['agents', 'arrival', 'rate_per_s'], 'required: conversations started per second (or give each stage its rate in agents.stages)');
    if (w.duration === null) issue(['duration'], 'agents.arrival starts conversations for a length of time: set duration (e.g. 10m, or --duration 10m) or give agents.stages');
    return;
  }
  if (w.duration !== null) issue(['duration'], 'agents.stages give the run its length (the sum of their durations); remove duration');
  const rates = stages.filter((s) => s.rate_per_s !== undefined).length;
  const counts = stages.filter((s) => s.count !== undefined).length;
  stages.forEach((s, i) => {
    if (s.rate_per_s !== undefined && s.count !== undefined) issue(['agents', 'stages', i], 'give either rate_per_s (conversations started per second) or count (agents), not both');
    else if (s.rate_per_s === undefined && s.count === undefined) issue(['agents', 'stages', i], 'give rate_per_s (conversations started per second) or count (agents)');
  });
  if (rates > 0 && counts > 0) issue(['agents', 'stages'], 'every stage gives rate_per_s (open loop) or every stage gives count (agents); they cannot mix');
  if (counts > 0 && arrival !== null) issue(['agents', 'arrival'], 'stages of agent counts are closed loop: remove agents.arrival, or give the stages rate_per_s');
  if (rates > 0 && arrival !== null && arrival.rate_per_s !== null) issue(['agents', 'arrival', 'rate_per_s'], 'each stage gives its own rate_per_s: remove this one');
  if (stages.every((s) => (s.rate_per_s ?? s.count ?? 0) === 0)) issue(['agents', 'stages'], 'every stage is at 0: nothing would run');
  let totalMs = 0;
  try {
    for (const s of stages) totalMs += parseDurationMs(s.duration);
  } catch {
    return; // a bad stage duration says so itself
  }
  const windowS = w.window_s === 'auto' ? 10 : w.window_s;
  if (totalMs > MAX_DURATION_MS) issue(['agents', 'stages'], `the stages last ${Math.round(totalMs / 86_400_000)} days in all; at most ${MAX_DURATION_MS / 86_400_000} days`);
  else if (totalMs / (windowS * 1000) > MAX_WINDOWS)
    issue(
      ['agents', 'stages'],
      `the stages make ${Math.round(totalMs / (windowS * 1000)).toLocaleString('en-US')} windows of window_s ${windowS} s; at most ${MAX_WINDOWS.toLocaleString('en-US')}: raise window_s`,
    );
}

export const workloadSchema = z
  .strictObject({
    /** Name of the workload, used in the results folder name. @default the file name without extension */
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 letters, digits, ., _ or -')
      .optional(),
    /** Free-form key/value labels written to run.json (e.g. `arm: baseline`). @default {} */
    labels: z.record(z.string(), z.string()).default({}),
    /** Length of the time windows summary.json reports figures for (drift over a soak, A/B resampling), in
     * seconds, or `auto`: at least 20 windows a run, 1 s the shortest and 10 s the longest, taken from
     * `duration` (or a sweep's levels × `phase_duration`) before the run starts; a run of rounds (no duration)
     * is binned by the second and re-binned once its length is known, at the end. summary.json `window` says
     * which length and why. @default "auto" */
    window_s: z.union([z.number().min(0.1).max(86_400), z.literal('auto')]).default('auto'),
    target: targetSchema.prefault({}),
    agents: agentsSchema.prefault({}),
    conversation: conversationSchema.prefault({}),
    watchdog: watchdogSchema.prefault({}),
    engine: engineSchema.prefault({}),
    /** Gauge scraping, burst sampling, verdicts and probes (README, "Monitor"). */
    monitor: monitorSchema.prefault({}),
    /** Resending a failed request, once: `none` (a reproducer must not hide the fault); `idempotent-safe`:
     * only failures that never got an answer started (connection refused, the keep-alive race);
     * `always`: any error (never a hang). Both attempts are recorded. @default "none" */
    retry: z.enum(['none', 'idempotent-safe', 'always']).default('none'),
    /** Run for this long (`30m`, `8h`, a number of seconds): agents start a fresh conversation whenever one
     * reaches `agents.rounds` or `conversation.max_context_tokens`, until the time is up; then no new requests,
     * and in-flight ones finish within their deadlines. `null`: each agent runs one conversation. @default null */
    duration: durationSchema.default(null),
    thresholds: thresholdsSchema.prefault({}),
    results: resultsSchema.prefault({}),
    client_metrics: clientMetricsSchema.prefault({}),
    /** Trace context on every request, trace links and OTLP span export (docs/tracing.md). */
    tracing: tracingSchema.prefault({}),
    /** Concurrency sweep; `null` runs `agents.count` agents in one phase, `main`. @default null */
    sweep: sweepSchema.nullable().default(null),
    /** Replay a recorded trace instead of generating conversations (`agents.count`, `agents.rounds`,
     * `agents.think_time_ms` and `conversation` are then unused). `null`: no replay. @default null */
    replay: replaySchema.nullable().default(null),
  })
  .superRefine((w, ctx) => {
    // Times past one Node timer and token counts past 10 M, whatever the field (bounds.ts).
    const before = ctx.issues.length;
    checkBounds(w, refineIssues(ctx));
    const context = largestContextTokens({ rounds: w.agents.rounds, ...w.conversation });
    // Only once every field is within bounds: a single huge field says it itself.
    if (ctx.issues.length === before && context > MAX_TOKENS) {
      ctx.addIssue({
        code: 'custom',
        path: ['agents', 'rounds'],
        message: `a conversation of ${w.agents.rounds} rounds would grow past ${MAX_TOKENS.toLocaleString('en-US')} tokens (the most a request may carry); use fewer rounds, smaller or slower-growing tool results, or set conversation.max_context_tokens`,
      });
    }
    // A timed run keeps a few figures per window: a year of 0.1 s windows would not fit in memory.
    for (const [path, text, phases] of [
      [['duration'], w.duration, 1],
      [['sweep', 'phase_duration'], w.sweep?.phase_duration ?? null, w.sweep?.agents.length ?? 1],
    ] as const) {
      // Nothing more to say about a duration that is wrong in itself.
      if (text === null || ctx.issues.some((issue) => (issue.path ?? []).join('.') === path.join('.'))) continue;
      let ms: number;
      try {
        ms = parseDurationMs(text);
      } catch {
        continue; // reported by the field itself
      }
      // `auto` gives any run this long its longest window, 10 s (analysis/windows.ts).
      const windowS = w.window_s === 'auto' ? 10 : w.window_s;
      const windows = (ms * phases) / (windowS * 1000);
      if (windows > MAX_WINDOWS) {
        ctx.addIssue({
          code: 'custom',
          path: [...path],
          message: `${clip(String(text))}${phases > 1 ? ` × ${phases} phases` : ''} is ${Math.round(windows).toLocaleString('en-US')} windows of window_s ${w.window_s === 'auto' ? 'auto (10 s)' : `${w.window_s} s`}; at most ${MAX_WINDOWS.toLocaleString('en-US')}: raise window_s`,
        });
      }
    }
    if (w.engine.output_tokens_min > w.engine.output_tokens_max) {
      ctx.addIssue({ code: 'custom', path: ['engine', 'output_tokens_min'], message: `must not exceed engine.output_tokens_max (${w.engine.output_tokens_max})` });
    }
    if (w.sweep !== null) {
      const seen = new Set<number>();
      w.sweep.agents.forEach((n, i) => {
        if (seen.has(n)) ctx.addIssue({ code: 'custom', path: ['sweep', 'agents', i], message: `level ${n} appears twice; each level is one phase (c${n})` });
        seen.add(n);
      });
    }
    if (w.duration !== null && w.sweep !== null) {
      ctx.addIssue({ code: 'custom', path: ['duration'], message: 'a sweep runs its levels one after another; give each a length with sweep.phase_duration instead' });
    }
    if (w.replay !== null && w.sweep !== null) {
      ctx.addIssue({ code: 'custom', path: ['replay'], message: 'a replay sends the recorded conversations; it cannot be combined with a sweep' });
    }
    if (w.replay !== null && w.agents.workers !== 1) {
      ctx.addIssue({ code: 'custom', path: ['agents', 'workers'], message: 'a replay runs on the main thread; set agents.workers to 1' });
    }
    loadIssues(w, ctx);
    publicNameIssues(w.target, ctx);
    if (w.target.tls.insecure && w.target.tls.ca !== null) {
      ctx.addIssue({ code: 'custom', path: ['target', 'tls', 'insecure'], message: 'set either tls.insecure or tls.ca, not both' });
    }
    const { headers_ms, first_token_ms, total_ms } = w.watchdog;
    // Name the values: the longer deadline is often a default the user never wrote (first_token_ms is 120000).
    const longer = Object.entries({ headers_ms, first_token_ms }).filter(([, ms]) => ms > total_ms);
    if (longer.length > 0) {
      const list = longer.map(([key, ms]) => `${key} (${ms})`).join(' and ');
      ctx.addIssue({
        code: 'custom',
        path: ['watchdog', 'total_ms'],
        message: `${total_ms} is shorter than ${list}; set ${longer.map(([key]) => key).join(' and ')} to at most ${total_ms}, or raise total_ms`,
      });
    }
  });

/** A workload with every default filled in; never mutated after validation. */
export type Workload = z.output<typeof workloadSchema> & { name: string };

// A run folder as someone else might hand it over: every free-text field set to one text (a payload that would
// run as code if pasted into a script or a page), for the tests of repro, report and compare.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What each payload tries: create CANARY (a path the test checks afterwards). */
export function payloads(canary: string): string[] {
  return [
    `2026-12-05T08:00:00.000Z\ntouch ${canary}\n#`,
    `x\r\ntouch ${canary}\r\n# `,
    `x\u2028import('node:fs').then((f) => f.writeFileSync(${JSON.stringify(canary)}, ''));\u2029//`,
    `x\u2029touch ${canary}`,
    `$(touch ${canary})`,
    `\`touch ${canary}\``,
    `'; touch ${canary}; echo '`,
    `"; touch ${canary}; echo "`,
    `\\"; touch ${canary}; #`,
    `*/ import('node:fs').then((f) => f.writeFileSync(${JSON.stringify(canary)}, '')); /*`,
    `</script><script>document.title='pwned'</script><img src=x onerror=alert(1)><!--`,
  ];
}

/** A request record as roundload writes one, with `over` on top. */
function record(over: Record<string, unknown>): Record<string, unknown> {
  return {
    t: '2026-12-05T08:00:00.000Z',
    run_ms: 100,
    agent: 0,
    conversation: 'a0-c1',
    round: 1,
    phase: 'main',
    path: 'direct',
    status: 'ok',
    http_status: 200,
    headers_ms: 5,
    ttft_ms: 10,
    e2e_ms: 50,
    server_ttft_ms: null,
    itl: { count: 3, mean_ms: 2, p50_ms: 2, p99_ms: 3, max_ms: 3 },
    chunks: 4,
    bytes: 400,
    request_bytes: 900,
    prompt_tokens: 100,
    completion_tokens: 4,
    cached_tokens: null,
    tokens_estimated: false,
    finish_reason: 'stop',
    tool_calls: [],
    content_chars: 20,
    reasoning_chars: 0,
    error: null,
    hang: null,
    connection: { id: 'c1', nth: 1, local_port: 40000, age_ms: 0, idle_ms: null, tls: null },
    ...over,
  };
}

/** A run folder: two ok requests and a failure on socket c1; `text` in every free-text field. */
/** `opts.secret` (default `text`) is the value of a header off the allow-list and of extra_body strings at every
 * depth whose names say nothing (`session_key`, `bearer`, `sas`, `deep.a[0].pwd`, `metadata.user_private`). */
export function folder(dir: string, text: string, opts: { failure?: Record<string, unknown>; torn?: boolean; secret?: string } = {}): string {
  const secret = opts.secret ?? text;
  // What goes into a line of curl's config (URLs, header values) cannot hold a line break: those are refused
  // (a test of their own); every other character of the payload stays.
  const flat = text.replace(/[\r\n]/g, ' ');
  mkdirSync(dir, { recursive: true });
  const manifest = {
    schema_version: 1,
    name: `run ${text}`,
    status: `completed ${text}`,
    started_at: `2026-12-05T08:00:00.000Z ${text}`,
    ended_at: null,
    argv: [text],
    labels: { arm: text },
    target: { url: `http://127.0.0.1:1/${flat}`, embedded: false, model: `m ${text}`, tls_insecure: false },
    path: `direct ${text}`,
    route: { request_url: `http://127.0.0.1:1/${flat}`, connect_proxy: null, bypass_url: null },
    versions: { roundload: text },
    host: { hostname: text },
    workload: {
      name: text,
      target: {
        api_key_env: `KEY_${text}`,
        headers: { 'User-Agent': `ua ${flat}`, "X-Weird`$'|&~": secret },
        public_headers: ['User-Agent'],
        extra_body: {
          [`k ${text}`]: text,
          session_key: secret,
          bearer: secret,
          sas: secret,
          deep: { a: [{ pwd: secret }, 3] },
          metadata: { user_private: secret },
          nested: { [text]: [text] },
          // The payload as keys and values four levels down, and beside a known option's own keys.
          deeper: { [text]: [{ [text]: { [text]: text } }] },
          chat_template_kwargs: { enable_thinking: true, [text]: text },
          reasoning_effort: 'high',
        },
        public_extra_body: [],
      },
      conversation: { system_prompt_tokens: 20, max_tokens: 8, tools: 'none' },
      watchdog: { connect_ms: 500, headers_ms: 500, first_token_ms: 500, stall_ms: 500, total_ms: 1000 },
    },
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(manifest));
  const failure = opts.failure ?? {
    status: 'hang',
    http_status: null,
    error: null,
    hang: { phase: 'headers', deadline: 'headers_ms', deadline_ms: 500, last_byte_age_ms: 500 },
  };
  const lines = [
    record({ finish_reason: text, tool_calls: [{ name: text, arguments_bytes: 3 }] }),
    record({ run_ms: 200, round: 2, connection: { id: 'c1', nth: 2, local_port: 40000, age_ms: 150, idle_ms: 50, tls: null } }),
    record({ run_ms: 300, round: 3, connection: { id: 'c1', nth: 3, local_port: 40000, age_ms: 250, idle_ms: 50, tls: null }, ...failure }),
  ];
  writeFileSync(join(dir, 'requests.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  const events = [
    { kind: 'hang', t: '2026-12-05T08:00:00.300Z', run_ms: 300, record: lines[2] },
    { kind: 'error', t: '2026-12-05T08:00:00.300Z', run_ms: 300, agent: 0, conversation: 'a0-c1', round: 3, class: 'http_5xx', message: text },
    { kind: 'probe', t: '2026-12-05T08:00:00.300Z', run_ms: 300, name: text, on: 'hang', stdout: text, stderr: text, exit_code: 0 },
  ];
  writeFileSync(join(dir, 'events.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  writeFileSync(join(dir, 'summary.json'), JSON.stringify({ run: {}, totals: {}, phases: [], thresholds: {}, diagnosis: { verdict: text, confidence: 0.5, evidence: [text] } }));
  if (opts.torn === true) appendFileSync(join(dir, 'requests.jsonl'), '{"t": "2026-12-05T08:00:00.400Z", "status": "o');
  return dir;
}

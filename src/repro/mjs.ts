// repro.mjs: the standalone reproducer, as text. Node >= 18 built-ins only (node:http, node:https, node:tls):
// the plan is embedded as JSON, the bodies come from the embedded generator (bodies.ts), one keep-alive socket
// carries the sequence as the run's did, and the run's deadlines decide whether a request hung.
// The runtime below is JavaScript in a String.raw template: it uses no backticks and no template placeholders.
import { BODY_JS } from './bodies.js';
import { oneLine } from '../util/index.js';
import type { ReproPlan } from './plan.js';

const RUNTIME_JS = String.raw`
const USAGE = [
  'usage: node repro.mjs [--target URL] [--ca FILE] [--insecure] [--servername NAME] [--proxy URL]',
  '                      [--api-key-env NAME] [--header "Name: value"]... [--times N] [--max-time SECONDS]',
  '',
  'Replays the failing connection of run ' + PLAN.run.name + ' (' + PLAN.requests.length + ' requests on one kept-alive socket).',
  'Exit 1 with REPRODUCED (or FAILED DIFFERENTLY) when a request hangs or fails, 0 with NOT REPRODUCED, 2 on a setup error.',
  '  --target URL        base URL (default ' + PLAN.target + ')',
  '  --ca FILE           trust this CA (PEM) for an https target',
  '  --insecure          do not verify the server certificate',
  '  --servername NAME   TLS SNI and certificate name (default the target host)',
  '  --proxy URL         tunnel through this HTTP CONNECT proxy' + (PLAN.proxy ? ' (default ' + PLAN.proxy + ')' : ''),
  '  --api-key-env NAME  send Authorization: Bearer $NAME (without it: $ROUNDLOAD_API_KEY, when set)',
  '  --header "N: v"     add a header (repeatable)',
  '  --times N           repeat the sequence N times, each on a fresh socket (default 1)',
  '  --max-time SECONDS  give up after this long, exit 2 (default: every request at its total deadline)',
].join('\n');

function fail(message) {
  process.stderr.write('repro.mjs: ' + message + '\n');
  process.exit(2);
}

/** The run's headers: the public ones as recorded, each secret one from its environment variable (when set). */
function runHeaders() {
  const headers = Object.assign({}, PLAN.headers);
  for (const secret of PLAN.secret_headers) {
    const value = process.env[secret.env];
    if (value) headers[secret.name] = value;
    else process.stderr.write('repro.mjs: header ' + secret.name + ' is secret and not sent: set ' + secret.env + ' to its value\n');
  }
  return headers;
}

/** The bodies with each secret field's placeholder (a JSON string) replaced by its variable's value. */
function fillSecrets(bodies) {
  let out = bodies;
  for (const secret of PLAN.secret_body) {
    const value = process.env[secret.env];
    if (!value) {
      process.stderr.write('repro.mjs: extra_body field ' + secret.name + ' is secret and not sent: set ' + secret.env + ' to its value\n');
      continue;
    }
    const mark = JSON.stringify('$' + '{' + secret.env + '}');
    out = out.map((body) => body.split(mark).join(JSON.stringify(value)));
  }
  return out;
}

function parseArgs(argv) {
  const opts = { target: PLAN.target, ca: null, insecure: PLAN.insecure, servername: null, proxy: PLAN.proxy, apiKeyEnv: null, apiKey: null, headers: runHeaders(), times: 1, maxTimeS: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(flag + ' needs a value');
      return argv[++i];
    };
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (flag === '--target') opts.target = value();
    else if (flag === '--ca') opts.ca = value();
    else if (flag === '--insecure') opts.insecure = true;
    else if (flag === '--servername') opts.servername = value();
    else if (flag === '--proxy') opts.proxy = value();
    else if (flag === '--api-key-env') {
      opts.apiKeyEnv = value();
    } else if (flag === '--header') {
      const h = value();
      const at = h.indexOf(':');
      if (at <= 0) fail('--header must be "Name: value", got ' + JSON.stringify(h));
      opts.headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
    } else if (flag === '--times') opts.times = Number(value());
    else if (flag === '--max-time') opts.maxTimeS = Number(value());
    else fail('unknown flag ' + flag + '\n' + USAGE);
  }
  if (!Number.isInteger(opts.times) || opts.times < 1) fail('--times must be a whole number >= 1');
  if (opts.maxTimeS !== null && !(opts.maxTimeS > 0)) fail('--max-time must be a number of seconds > 0');
  // The key comes from a variable the receiver names, or from ROUNDLOAD_API_KEY: never from one the run folder
  // names, which would let the folder choose which of this machine's secrets leave it.
  if (opts.apiKeyEnv !== null && !process.env[opts.apiKeyEnv]) fail('--api-key-env ' + opts.apiKeyEnv + ': that environment variable is not set');
  opts.apiKey = process.env[opts.apiKeyEnv ?? 'ROUNDLOAD_API_KEY'] || null;
  return opts;
}

function requestHeaders(opts, body) {
  const headers = Object.assign({ 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': String(Buffer.byteLength(body)) }, opts.headers);
  if (opts.apiKey) headers.authorization = 'Bearer ' + opts.apiKey;
  return headers;
}

/** An HTTP CONNECT tunnel to the target's host:port, bounded by the connect deadline. */
function tunnel(proxyUrl, url, tlsOptions, secure, callback) {
  const proxy = new URL(proxyUrl);
  const port = url.port || (secure ? '443' : '80');
  const lib = proxy.protocol === 'https:' ? https : http;
  const req = lib.request({ host: proxy.hostname, port: proxy.port || (proxy.protocol === 'https:' ? 443 : 80), method: 'CONNECT', path: url.hostname + ':' + port, headers: { host: url.hostname + ':' + port }, ca: tlsOptions.ca });
  const timer = setTimeout(() => req.destroy(new Error('the CONNECT proxy did not answer within connect_ms ' + PLAN.deadlines.connect_ms)), PLAN.deadlines.connect_ms);
  req.once('connect', (res, socket) => {
    clearTimeout(timer);
    if (res.statusCode !== 200) {
      socket.destroy();
      callback(new Error('the CONNECT proxy answered ' + res.statusCode));
      return;
    }
    callback(null, secure ? tls.connect(Object.assign({ socket: socket }, tlsOptions)) : socket);
  });
  req.once('error', (error) => {
    clearTimeout(timer);
    callback(error);
  });
  req.end();
}

/** One agent, one socket: keepAlive with maxSockets 1, as the run's connection was reused. */
function makeAgent(opts, url) {
  const secure = url.protocol === 'https:';
  const tlsOptions = { rejectUnauthorized: !opts.insecure };
  if (opts.ca) tlsOptions.ca = readFileSync(opts.ca);
  if (opts.servername) tlsOptions.servername = opts.servername;
  else if (!net.isIP(url.hostname)) tlsOptions.servername = url.hostname;
  const base = { keepAlive: true, maxSockets: 1, maxFreeSockets: 1 };
  const agent = secure ? new https.Agent(Object.assign(base, tlsOptions)) : new http.Agent(base);
  if (opts.proxy) agent.createConnection = (_options, callback) => tunnel(opts.proxy, url, tlsOptions, secure, callback);
  return agent;
}

const socketUses = new WeakMap();

/** Counts a streamed chat-completions chunk's tokens (content, reasoning or tool-call deltas). */
function sseTokens(state, text) {
  state.pending += text;
  const lines = state.pending.split('\n');
  state.pending = lines.pop();
  let tokens = 0;
  for (const line of lines) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]') continue;
    try {
      const delta = JSON.parse(data).choices?.[0]?.delta ?? {};
      if (delta.content || delta.reasoning_content || delta.reasoning || (delta.tool_calls && delta.tool_calls.length > 0)) tokens += 1;
    } catch {
      // not JSON: counted as bytes only
    }
  }
  return tokens;
}

/** Sends one request and watches it with the run's deadlines (src/watchdog: connect, headers, first token from
 * send; then silence between bytes; total). Resolves once, with ok, error or hang. */
function send(agent, url, body, opts, traceparent) {
  return new Promise((resolve) => {
    const d = PLAN.deadlines;
    const t0 = performance.now();
    const s = { connected: false, headersAt: null, firstTokenAt: null, lastByteAt: null, tokens: 0, bytes: 0, http: null, reused: false, nth: 0, pending: '', errorBody: '' };
    let done = false;
    const finish = (result) => {
      if (done) return;
      done = true;
      clearInterval(ticker);
      const at = performance.now();
      resolve(Object.assign({ http: s.http, reused: s.reused, nth: s.nth, tokens: s.tokens, bytes: s.bytes, e2eMs: at - t0, ttftMs: s.firstTokenAt === null ? null : s.firstTokenAt - t0 }, result));
    };
    const hang = (phase, deadline, ms, silentMs) => {
      finish({ status: 'hang', phase: phase, deadline: deadline, deadlineMs: ms, silentMs: silentMs });
      req.destroy();
    };
    const lib = url.protocol === 'https:' ? https : http;
    // The run's traceparent again: the rerun's server spans land in the run's trace of this request.
    const headers = requestHeaders(opts, body);
    if (traceparent) headers.traceparent = traceparent;
    const req = lib.request(url, { method: 'POST', agent: agent, headers: headers });
    req.on('socket', (socket) => {
      s.reused = req.reusedSocket;
      s.nth = (socketUses.get(socket) ?? 0) + 1;
      socketUses.set(socket, s.nth);
      s.connected = s.reused || !socket.connecting;
      if (!s.connected) socket.once(url.protocol === 'https:' && !opts.proxy ? 'secureConnect' : 'connect', () => (s.connected = true));
      if (opts.proxy) s.connected = true;
    });
    req.on('response', (res) => {
      s.http = res.statusCode;
      s.headersAt = s.lastByteAt = performance.now();
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        s.lastByteAt = performance.now();
        s.bytes += Buffer.byteLength(chunk);
        if (s.http >= 400) s.errorBody = (s.errorBody + chunk).slice(0, 300);
        else s.tokens += sseTokens(s, chunk);
        if (s.firstTokenAt === null && s.tokens > 0) s.firstTokenAt = s.lastByteAt;
      });
      res.on('end', () => {
        if (s.http >= 400) finish({ status: 'error', error: 'HTTP ' + s.http + (s.errorBody ? ': ' + s.errorBody.replace(/\s+/g, ' ').slice(0, 160) : '') });
        else finish({ status: 'ok' });
      });
      res.on('error', (error) => finish({ status: 'error', error: 'the stream broke after ' + s.tokens + ' tokens: ' + (error.code || error.message) }));
      res.on('aborted', () => finish({ status: 'error', error: 'the server closed the stream after ' + s.tokens + ' tokens' }));
    });
    req.on('error', (error) => finish({ status: 'error', error: (error.code ? error.code + ' ' : '') + error.message, code: error.code || null }));
    // The run's watchdog, at 10 ms resolution: the earliest deadline of the request's state decides.
    const ticker = setInterval(() => {
      const now = performance.now();
      const since = now - t0;
      if (since >= d.total_ms) return hang('total', 'total_ms', d.total_ms, now - (s.lastByteAt ?? t0));
      if (s.headersAt === null) {
        const phase = s.connected ? 'headers' : 'connect';
        if (!s.connected && since >= d.connect_ms) return hang(phase, 'connect_ms', d.connect_ms, since);
        if (s.connected && since >= d.headers_ms) return hang(phase, 'headers_ms', d.headers_ms, since);
        if (since >= d.first_token_ms) return hang(phase, 'first_token_ms', d.first_token_ms, since);
      } else if (s.firstTokenAt === null && s.http < 400) {
        if (since >= d.first_token_ms) return hang('first_token', 'first_token_ms', d.first_token_ms, now - s.lastByteAt);
      } else if (s.http < 400 && now - s.lastByteAt >= d.stall_ms) return hang('mid_stream', 'stall_ms', d.stall_ms, now - s.lastByteAt);
    }, 10);
    req.end(body);
  });
}

const sec = (ms) => (ms / 1000).toFixed(1) + ' s';

function requestLine(i, r, result) {
  const head = 'request ' + (i + 1) + '/' + PLAN.requests.length + '  ' + r.conversation + ' round ' + r.round + '  ' + r.bytes + ' B  socket ' + (result.reused ? 'reused' : 'fresh') + ' (nth ' + result.nth + '; run: nth ' + r.nth + ')';
  const timing = '  http ' + (result.http ?? '-') + '  ttft ' + (result.ttftMs === null ? '-' : Math.round(result.ttftMs) + ' ms') + '  e2e ' + Math.round(result.e2eMs) + ' ms  ' + result.tokens + ' tokens';
  const end = result.status === 'ok' ? '  ok' : result.status === 'hang' ? '  HANG at ' + result.phase + ' (' + result.deadline + ' ' + result.deadlineMs + ')' : '  ERROR ' + result.error;
  return head + timing + end + '  [run: ' + r.status + ']';
}

/** What happened, in the words of the verdict line. */
function describe(i, result) {
  const socket = 'request ' + (i + 1) + ' on the ' + (result.reused ? 'reused' : 'fresh') + ' socket (nth ' + result.nth + ')';
  if (result.status === 'error') return socket + ' failed: ' + result.error;
  const silent = sec(result.silentMs);
  const why = result.deadline + ' ' + result.deadlineMs;
  if (result.phase === 'connect') return socket + ' could not connect for ' + silent + ' (' + why + ')';
  if (result.phase === 'headers') return socket + ' got no response headers for ' + silent + ' (' + why + ')';
  if (result.phase === 'first_token') return socket + ' got headers (HTTP ' + result.http + ') but no token for ' + silent + ' (' + why + ')';
  if (result.phase === 'mid_stream') return socket + ' got no byte for ' + silent + ' after ' + result.tokens + ' tokens (' + why + ')';
  return socket + ' was not done after ' + sec(result.e2eMs) + ', ' + result.tokens + ' tokens (' + why + ')';
}

/** Same failure as the run's: a hang in the same phase, or an error (of any class). */
function sameFailure(result) {
  const f = PLAN.failure;
  if (result.status !== f.status) return false;
  return f.status === 'error' || (f.hang !== null && f.hang.phase === result.phase);
}

const SETUP = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|EPROTO|ERR_SSL/;

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let url;
  try {
    url = new URL(opts.target.replace(/\/+$/, '') + PLAN.endpoint);
  } catch {
    fail('--target must be a URL, got ' + JSON.stringify(opts.target));
  }
  const bodies = fillSecrets(buildBodies(PLAN));
  const budgetMs = opts.maxTimeS !== null ? opts.maxTimeS * 1000 : opts.times * PLAN.requests.reduce((n, r) => n + r.idle_ms + PLAN.deadlines.total_ms, 0) + 30000;
  setTimeout(() => fail('gave up after --max-time ' + sec(budgetMs) + ' (a request still out)'), budgetMs).unref();
  process.stdout.write('repro.mjs: ' + PLAN.requests.length + ' requests of run ' + PLAN.run.name + ' to ' + url.href + (opts.proxy ? ' via CONNECT ' + opts.proxy : '') + ', one kept-alive socket; looking for: ' + PLAN.failure.description + '\n');
  for (let pass = 1; pass <= opts.times; pass++) {
    const agent = makeAgent(opts, url);
    for (let i = 0; i < PLAN.requests.length; i++) {
      const r = PLAN.requests[i];
      if (i > 0 && r.idle_ms > 0) await new Promise((done) => setTimeout(done, r.idle_ms));
      const result = await send(agent, url, bodies[i], opts, r.traceparent);
      process.stdout.write((opts.times > 1 ? 'pass ' + pass + ' ' : '') + requestLine(i, r, result) + '\n');
      if (result.status === 'ok') continue;
      agent.destroy();
      const where = describe(i, result) + (opts.times > 1 ? ' (pass ' + pass + ' of ' + opts.times + ')' : '');
      if (result.status === 'error' && result.http === null && SETUP.test(result.error) && PLAN.failure.status === 'hang') fail('SETUP: ' + where + '; check --target, --ca/--insecure and --proxy');
      process.stdout.write((sameFailure(result) ? 'REPRODUCED: ' + where : 'FAILED DIFFERENTLY: ' + where + '; the run had ' + PLAN.failure.description) + '\n');
      process.exit(1);
    }
    agent.destroy();
  }
  process.stdout.write('NOT REPRODUCED: ' + opts.times * PLAN.requests.length + ' requests (' + opts.times + ' x ' + PLAN.requests.length + ') all ok within the run\'s deadlines; the run had ' + PLAN.failure.description + '\n');
  process.exit(0);
}

main().catch((error) => fail(error && error.stack ? error.stack : String(error)));
`;

/** Where the secret values come from, in one comment line (environment variable names only). */
function secretLine(plan: ReproPlan): string {
  const vars = [...plan.secret_headers, ...plan.secret_body].map((s) => s.env);
  return vars.length === 0 ? 'the run sent no secret header or body field.' : `secret values come from the environment: ${vars.join(', ')} (see README.txt).`;
}

function header(plan: ReproPlan): string {
  return [
    '#!/usr/bin/env node',
    `// repro.mjs — written by ${oneLine(plan.generated_by)} (roundload repro) from the run folder ${oneLine(plan.run.folder)}.`,
    '// A standalone reproducer: Node >= 18, built-ins only. Run `node repro.mjs --help`.',
    `// It replays connection ${oneLine(plan.connection ?? '(none: the request never got a socket)')}: ${plan.requests.length} requests on one kept-alive socket,`,
    "// with the run's body sizes, idle gaps and deadlines, and looks for the same failure:",
    `//   ${oneLine(plan.failure.description)}`,
    '// Bodies are synthetic text of the recorded sizes (the run kept no message text); no API key or secret is in here:',
    `// ${secretLine(plan)}`,
    "import http from 'node:http';",
    "import https from 'node:https';",
    "import net from 'node:net';",
    "import tls from 'node:tls';",
    "import { readFileSync } from 'node:fs';",
    "import { performance } from 'node:perf_hooks';",
    '',
  ].join('\n');
}

/** The whole of repro.mjs for `plan`. */
export function reproMjs(plan: ReproPlan): string {
  return `${header(plan)}\nconst PLAN = ${JSON.stringify(plan, null, 1)};\n${BODY_JS}${RUNTIME_JS}`;
}

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readJsonl, runCli, tempDir } from '../helpers/tmp.js';
import type { RequestRecord } from '../../src/types/index.js';

// Distinctive values, so a grep can only find them where they leaked.
const KEY = 'sk-live-Zq8Wv3Tn5Kp2';
const TARGET_PASS = 'tgt-pw-Hx4Rj7Lm';
const MONITOR_PASS = 'mon-pw-Bv6Qc9Ns';
const PROXY_PASS = 'pxy-pw-Ud2Fy8Ge';
const BYPASS_PASS = 'byp-pw-Ta5Wq1Zc';
const SECRETS = { KEY, TARGET_PASS, MONITOR_PASS, PROXY_PASS, BYPASS_PASS };

async function listen(t: TestContext, server: Server, held: Set<Socket> = new Set()): Promise<number> {
  server.on('connection', (s: Socket) => {
    held.add(s);
    s.on('close', () => held.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const s of held) s.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/**
 * An OpenAI-style server that leaks the Authorization header every way it can: in a 401 body, in streamed
 * content, and in a broken SSE line (so the client's error message quotes it). /metrics wants Basic auth.
 */
async function leakyServer(t: TestContext): Promise<{ port: number; metricsAuthorized: () => number }> {
  let chats = 0;
  let metricsAuthorized = 0;
  const expectedBasic = `Basic ${Buffer.from(`mon:${MONITOR_PASS}`).toString('base64')}`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const auth = req.headers.authorization ?? '(none)';
    if (req.url === '/metrics') {
      if (auth !== expectedBasic) return void res.writeHead(401).end(`unauthorized: got ${auth}\n`);
      metricsAuthorized += 1;
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 1\n');
    }
    if (req.url?.endsWith('/models')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'deepseek-v4-flash', note: `you sent ${auth}` }] }));
    req.resume();
    req.on('end', () => {
      chats += 1;
      if (chats % 3 === 2) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `invalid api key: ${auth}`, type: 'auth' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: `echo: ${auth} ` }));
      res.write(chunk({ content: `and again ${auth}` }));
      if (chats % 3 === 0) {
        res.end(`data: {"broken": "${auth}"\n\n`);
        return;
      }
      res.write(chunk({}, 'stop'));
      res.end(`data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\ndata: [DONE]\n\n`);
    });
  });
  const port = await listen(t, server);
  return { port, metricsAuthorized: () => metricsAuthorized };
}

/** A CONNECT proxy that wants `Proxy-Authorization: Basic proxy:PROXY_PASS` (and says what it got when refusing). */
async function authProxy(t: TestContext): Promise<{ port: number; tunnels: () => number }> {
  let tunnels = 0;
  const expected = `Basic ${Buffer.from(`proxy:${PROXY_PASS}`).toString('base64')}`;
  const server = createServer((_req, res) => res.writeHead(405).end());
  const held = new Set<Socket>();
  server.on('connect', (req: IncomingMessage, client: Socket) => {
    client.on('error', () => {});
    if (req.headers['proxy-authorization'] !== expected) {
      client.end(`HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    tunnels += 1;
    const [host, port] = (req.url ?? '').split(':');
    const upstream = netConnect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    held.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  const port = await listen(t, server, held);
  return { port, tunnels: () => tunnels };
}

/** Every file under `dir` (gzipped parts opened), as text. */
function filesOf(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesOf(path));
    else out.push({ file: path, text: name.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString('utf8') : readFileSync(path, 'utf8') });
  }
  return out;
}

function assertNoSecrets(where: string, text: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    for (const form of [value, Buffer.from(value).toString('base64')]) assert.ok(!text.includes(form), `${name} leaked into ${where}`);
  }
  for (const basic of [`mon:${MONITOR_PASS}`, `proxy:${PROXY_PASS}`, `tgt:${TARGET_PASS}`]) assert.ok(!text.includes(Buffer.from(basic).toString('base64')), `a Basic token leaked into ${where}`);
}

test('an echoed API key and user:pass@ URLs (target, bypass, monitor target, --via proxy) appear nowhere in the results folder or the terminal, and the credentials are still used', async (t) => {
  const { port, metricsAuthorized } = await leakyServer(t);
  const proxy = await authProxy(t);
  const dir = tempDir(t);
  const out = join(dir, 'run');
  const file = join(dir, 'leaky.yaml');
  writeFileSync(
    file,
    `name: leaky
target: {api_key_env: RL_TEST_API_KEY}
agents: {count: 2, rounds: 3, think_time_ms: 0}
conversation: {tools: none, max_tokens: 16}
watchdog: {headers_ms: 5000, first_token_ms: 5000, stall_ms: 5000, total_ms: 10000}
monitor:
  interval_ms: 200
  canary_interval_s: 0
  targets: [{name: echo, url: "http://mon:${MONITOR_PASS}@127.0.0.1:${port}/metrics"}]
  probes: [{name: env, command: "echo key=$RL_TEST_API_KEY", on: [start, end]}]
`,
  );
  const res = await runCli(
    [
      'run',
      file,
      '--target',
      `http://tgt:${TARGET_PASS}@127.0.0.1:${port}`,
      '--via',
      `http://proxy:${PROXY_PASS}@127.0.0.1:${proxy.port}`,
      '--out',
      out,
      '--label',
      `via=http://proxy:${PROXY_PASS}@x`,
      '--set',
      `target.bypass=http://byp:${BYPASS_PASS}@127.0.0.1:${port}`,
    ],
    {
      timeoutMs: 60_000,
      env: { RL_TEST_API_KEY: KEY },
    },
  );
  assert.ok(res.code === 0 || res.code === 1, `exit ${res.code}: ${res.stderr}`);
  // The credentials did their job: the proxy tunnelled (Proxy-Authorization from --via) and the monitor
  // target answered its scrapes (Basic auth from the URL).
  assert.ok(proxy.tunnels() >= 2, `${proxy.tunnels()} tunnels`);
  assert.ok(metricsAuthorized() >= 1, 'the monitor target was scraped with its credentials');
  const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
  assert.ok(
    records.some((r) => r.status === 'ok'),
    'some requests went through',
  );
  assert.ok(
    records.some((r) => r.http_status === 401),
    'the echoing 401 was recorded',
  );
  assert.ok(
    records.some((r) => r.error !== null && r.error.message.includes('***')),
    `the key was masked in an error message: ${JSON.stringify(records.map((r) => r.error?.message))}`,
  );
  // The files the issue names, and every other one.
  const files = filesOf(out);
  for (const name of ['run.json', 'summary.json', 'report.html', 'junit.xml', 'events.jsonl', 'gauges.jsonl', 'requests.jsonl'])
    assert.ok(
      files.some((f) => f.file.endsWith(name)),
      `${name} written`,
    );
  for (const { file: f, text } of files) assertNoSecrets(f, text);
  assertNoSecrets('stdout', res.stdout);
  assertNoSecrets('stderr', res.stderr);
  // What is left is readable: the URLs with their credentials masked.
  const manifest = readFileSync(join(out, 'run.json'), 'utf8');
  assert.match(manifest, /http:\/\/tgt:\*\*\*@127\.0\.0\.1/);
  assert.match(manifest, /http:\/\/proxy:\*\*\*@127\.0\.0\.1/);
  assert.match(manifest, /http:\/\/byp:\*\*\*@127\.0\.0\.1/);
  assert.match(readFileSync(join(out, 'gauges.jsonl'), 'utf8'), /http:\/\/mon:\*\*\*@127\.0\.0\.1/);
});

test('an error that ends the run names the target with its credentials masked, and validate --json shows them masked', async (t) => {
  const dir = tempDir(t);
  // Port 9 (discard) refuses on loopback: the start-up check fails at once with the target's URL.
  const res = await runCli(['run', 'workloads/smoke.yaml', '--target', `http://tgt:${TARGET_PASS}@127.0.0.1:9`, '--out', join(dir, 'run')], { timeoutMs: 30_000 });
  assert.equal(res.code, 3, res.stderr);
  assert.match(res.stderr, /http:\/\/tgt:\*\*\*@127\.0\.0\.1:9/);
  assertNoSecrets('stderr', res.stderr);
  // Refused before any run starts: the echoed value is masked too.
  const invalid = await runCli(['validate', 'workloads/smoke.yaml', '--set', `target.url=ftp://tgt:${TARGET_PASS}@127.0.0.1:21`], { timeoutMs: 30_000 });
  assert.equal(invalid.code, 2);
  assert.match(invalid.stderr, /ftp:\/\/tgt:\*\*\*@127\.0\.0\.1:21/);
  assertNoSecrets('stderr of validate', invalid.stderr);
  const validate = await runCli(['validate', 'workloads/smoke.yaml', '--json', '--set', `target.via={kind: connect, url: "http://proxy:${PROXY_PASS}@127.0.0.1:3128"}`], { timeoutMs: 30_000 });
  assert.equal(validate.code, 0, validate.stderr);
  assert.match(validate.stdout, /http:\/\/proxy:\*\*\*@127\.0\.0\.1:3128/);
  assertNoSecrets('validate --json', validate.stdout);
});

// Secrets no list knows by name: vendor headers, a header with an ordinary name, extra_body fields.
const UNLISTED = {
  apim: 'apim-Qx7Lp2Vd9Ks4',
  iap: 'eyJhbGciOiJFUzI1NiJ9.iap-Rt5Ny8Wc',
  tenant: 'tenant-Mb3Hs6Fj',
  set: 'setsec-Ha8Jd3Lm',
  session: 'sess-Gw4Zk7Pq',
  jwt: 'ujwt-Dc2Xn5Tv',
  // Names that say nothing: a bearer token, a password, an Azure SAS token, a private field deep down.
  bearer: 'brr-Kf6Tq2Wm',
  pwd: 'pwd-Lc9Vx4Ns',
  sas: 'sv=2021-08-06&sig=Sas7Jp3Rb',
  priv: 'priv-Ye5Hm8Qd',
};

/** A chat server that echoes every header and the body it got: in streamed content, in a 401's message, and it
 * never answers every 4th request (a hang, so `repro` has something to write). */
async function echoServer(t: TestContext): Promise<{ url: string; seen: string[] }> {
  let chats = 0;
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.endsWith('/models')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 'deepseek-v4-flash' }] }));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      chats += 1;
      const echo = `${JSON.stringify(req.headers)} ${body.slice(0, 800)}`;
      seen.push(echo);
      if (chats % 4 === 0) return;
      setTimeout(() => {
        if (chats % 4 === 2) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `bad credentials: ${echo}` } }));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: `you sent ${echo}` }));
        res.write(chunk({}, 'stop'));
        res.end(`data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\ndata: [DONE]\n\n`);
      }, 150);
    });
  });
  const port = await listen(t, server);
  return { url: `http://127.0.0.1:${port}`, seen };
}

/** The first snapshot the dashboard's event stream sends (its page reads the same), bounded. */
function firstSnapshot(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = httpGet(new URL('/events', url), (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (/event: snapshot\ndata: .*\n\n/.test(text)) req.destroy();
      });
    });
    req.setTimeout(5000, () => req.destroy());
    req.on('close', () => resolve(text));
    req.on('error', (error) => (text === '' ? reject(error) : resolve(text)));
  });
}

test(
  'headers and extra_body fields no list knows are masked everywhere: run folder, terminal, live dashboard, repro folder; public ones are kept, and the server still gets every value',
  { timeout: 120_000 },
  async (t) => {
    const server = await echoServer(t);
    const dir = tempDir(t);
    const out = join(dir, 'run');
    const file = join(dir, 'unlisted.yaml');
    writeFileSync(
      file,
      `name: unlisted
target:
  headers: {Ocp-Apim-Subscription-Key: ${UNLISTED.apim}, X-Goog-Iap-Jwt-Assertion: ${UNLISTED.iap}, X-Tenant-Route: ${UNLISTED.tenant}, X-Session-Id: pub-session-visible}
  public_headers: [x-session-id]
  extra_body: {session_key: ${UNLISTED.session}, bearer: ${UNLISTED.bearer}, pwd: ${UNLISTED.pwd}, sas: "${UNLISTED.sas}", metadata: {user_jwt: ${UNLISTED.jwt}, user_private: [${UNLISTED.priv}]}, routing: {pool: pool-visible}, reasoning_effort: low, chat_template_kwargs: {enable_thinking: "false"}}
  public_extra_body: [routing]
agents: {count: 2, rounds: 4, think_time_ms: 100}
conversation: {tools: none, max_tokens: 16}
watchdog: {headers_ms: 800, first_token_ms: 2000, stall_ms: 2000, total_ms: 4000}
thresholds: {hangs: null, error_rate: null}
monitor: {canary_interval_s: 0}
`,
    );
    const pages: Promise<string>[] = [];
    const res = await runCli(['run', file, '--target', server.url, '--out', out, '--dashboard', '127.0.0.1:0', '--set', `target.headers.X-Set-Secret=${UNLISTED.set}`], {
      timeoutMs: 90_000,
      onStderrLine: (line) => {
        const url = /live dashboard on (http:\/\/\S+)/.exec(line)?.[1];
        if (url === undefined) return;
        pages.push(fetch(url).then((r) => r.text()));
        pages.push(new Promise<void>((resolve) => setTimeout(resolve, 1500)).then(() => firstSnapshot(url)));
      },
    });
    assert.ok(res.code === 0 || res.code === 1, `exit ${res.code}: ${res.stderr}`);
    const dashboard = await Promise.all(pages);
    assert.equal(dashboard.length, 2, 'the dashboard was served while the run went on');
    assert.match(dashboard[0]!, /<html/);
    assert.match(dashboard[1]!, /event: snapshot/);
    // The values did their job: the server got each of them.
    for (const value of Object.values(UNLISTED))
      assert.ok(
        server.seen.some((s) => s.includes(value)),
        `the server got ${value}`,
      );
    const records = readJsonl<RequestRecord>(join(out, 'requests.jsonl'));
    assert.ok(
      records.some((r) => r.status === 'hang'),
      'a request hung',
    );
    assert.ok(
      records.some((r) => r.error?.message.includes('***') === true),
      'an echo was masked',
    );
    const repro = await runCli(['repro', out], { timeoutMs: 30_000 });
    assert.equal(repro.code, 0, repro.stderr);
    const places = [
      ...filesOf(out),
      { file: 'stdout', text: res.stdout },
      { file: 'stderr', text: res.stderr },
      { file: 'repro stdout+stderr', text: repro.stdout + repro.stderr },
      { file: 'dashboard page', text: dashboard[0]! },
      { file: 'dashboard events', text: dashboard[1]! },
    ];
    assert.ok(
      places.some((p) => p.file.endsWith(join('repro', 'bodies', '001.json'))),
      'the repro folder is among the files',
    );
    for (const { file: where, text } of places) {
      for (const [name, value] of Object.entries(UNLISTED)) assert.ok(!text.includes(value), `${name} leaked into ${where}`);
    }
    const manifest = readFileSync(join(out, 'run.json'), 'utf8');
    assert.match(manifest, /"X-Session-Id": "pub-session-visible"/);
    assert.match(manifest, /"pool": "pool-visible"/);
    assert.match(manifest, /"reasoning_effort": "low"/);
    assert.match(manifest, /"enable_thinking": "false"/);
    assert.match(manifest, /"Ocp-Apim-Subscription-Key": "\[redacted\]"/);
    const readme = readFileSync(join(out, 'repro', 'README.txt'), 'utf8');
    for (const name of [
      'ROUNDLOAD_HEADER_OCP_APIM_SUBSCRIPTION_KEY',
      'ROUNDLOAD_HEADER_X_GOOG_IAP_JWT_ASSERTION',
      'ROUNDLOAD_EXTRA_SESSION_KEY',
      'ROUNDLOAD_EXTRA_METADATA_USER_JWT',
      'ROUNDLOAD_EXTRA_BEARER',
      'ROUNDLOAD_EXTRA_PWD',
      'ROUNDLOAD_EXTRA_SAS',
      'ROUNDLOAD_EXTRA_METADATA_USER_PRIVATE_0',
    ])
      assert.match(readme, new RegExp(name));
  },
);

// Real parts for the end-to-end tests: the embedded engine as a separate process (so it can be frozen with
// SIGSTOP or killed), real HAProxy and nginx in front of it, and a busy loop to starve a process of CPU.
// Every child runs in its own process group, is signalled as a group, and is killed (bounded) when the test
// ends — thawed first, so a test that fails mid-freeze leaves nothing stopped behind.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect as netConnect } from 'node:net';
import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { makeCertificates } from '../../src/hop/index.js';
import { cliArgs, ROOT } from './root.js';
import { tempDir } from './tmp.js';

/** The path of an executable on PATH or in the usual sbin folders, or null. */
export function findExecutable(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** A tool the test needs: skipped on a developer machine without it, a failure in CI (CI set), never a silent skip there. */
export function requireTool(t: TestContext, name: string, install: string): string | null {
  const bin = findExecutable(name);
  if (bin !== null) return bin;
  if (process.env.CI !== undefined && process.env.CI !== '') assert.fail(`${name} is not installed, and CI must run this test: .ci/run installs it (${install})`);
  t.skip(`${name} is not installed: \`${install}\` to run this real-parts test (it never skips in CI)`);
  return null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A child process in its own group: signal it as a group, stopped or not. */
export class Proc {
  exited = false;
  stderr = '';
  #stopped = false;

  constructor(readonly child: ChildProcess) {
    child.once('exit', () => (this.exited = true));
    child.stderr?.on('data', (d: Buffer) => {
      if (this.stderr.length < 64 * 1024) this.stderr += d.toString();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Signals the whole group (the process and any children it started). */
  signal(sig: NodeJS.Signals): void {
    if (this.exited) return;
    try {
      process.kill(-this.pid, sig);
    } catch {
      // already gone
    }
  }

  freeze(): void {
    this.#stopped = true;
    this.signal('SIGSTOP');
  }

  thaw(): void {
    this.#stopped = false;
    this.signal('SIGCONT');
  }

  /** SIGKILL, and wait (bounded) for the exit. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    for (let i = 0; i < 100 && !this.exited; i += 1) await sleep(20);
  }

  /** SIGTERM (thawed first), then SIGKILL after a second. */
  async stop(): Promise<void> {
    if (this.#stopped) this.thaw();
    this.signal('SIGTERM');
    for (let i = 0; i < 50 && !this.exited; i += 1) await sleep(20);
    if (!this.exited) await this.kill();
  }
}

function spawnProc(t: TestContext, command: string, args: readonly string[], options: { cwd?: string; stdout?: boolean } = {}): Proc {
  const child = spawn(command, args, { cwd: options.cwd ?? ROOT, detached: true, stdio: ['ignore', options.stdout === true ? 'pipe' : 'ignore', 'pipe'] });
  const proc = new Proc(child);
  t.after(() => proc.stop());
  return proc;
}

export interface EngineProc extends Proc {
  url: string;
  port: number;
  /** What to scrape: `engine` (`<url>/metrics`) for a single server; `router`, `prefill`, `decode` for PD. */
  targets: MonitorTarget[];
}

export interface MonitorTarget {
  name: string;
  url: string;
}

/**
 * `roundload engine` as its own process (tsx, from source) with `settings` (the workload's `engine:`
 * section), on `port` (0: a free one); resolves once it prints `roundload engine listening on <url>`. Extra
 * arguments (a `--topology`, say) go on its command line as given.
 */
export async function spawnEngine(t: TestContext, settings: Record<string, unknown> = {}, extraArgs: readonly string[] = [], port = 0): Promise<EngineProc> {
  const dir = tempDir(t, 'roundload-engine-');
  const file = join(dir, 'engine.yaml');
  writeFileSync(file, JSON.stringify(settings));
  const proc = spawnProc(t, process.execPath, cliArgs('engine', '--port', String(port), '--settings', file, ...extraArgs));
  // Single: the listening line is all. PD: its monitor.targets line follows, naming router, prefill and decode.
  const parsed = await new Promise<{ url: string; targets: MonitorTarget[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the engine did not start in 30 s: ${proc.stderr}`)), 30_000);
    const look = (): void => {
      const m = /roundload engine listening on (\S+) \(model [^,]*, topology (\w+)/.exec(proc.stderr);
      if (m === null) return;
      const url = m[1]!.replace(/\/+$/, '');
      let targets: MonitorTarget[] = [{ name: 'engine', url: `${url}/metrics` }];
      if (m[2] === 'pd') {
        const line = /monitor\.targets for this deployment: (\[.*\])/.exec(proc.stderr);
        if (line === null) return;
        targets = [...line[1]!.matchAll(/\{name: (\w+), url: "([^"]+)"\}/g)].map((x) => ({ name: x[1]!, url: x[2]! }));
      }
      clearTimeout(timer);
      resolve({ url, targets });
    };
    proc.child.stderr?.on('data', look);
    proc.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the engine exited (${code}) before listening: ${proc.stderr}`));
    });
  });
  return Object.assign(proc, { url: parsed.url, port: Number(new URL(parsed.url).port), targets: parsed.targets });
}

async function listening(proc: Proc, port: number, what: string, log: () => string): Promise<void> {
  for (let i = 0; i < 200 && !proc.exited; i += 1) {
    if (await canConnect(port)) return;
    await sleep(25);
  }
  throw new Error(`${what} did not start: ${proc.stderr}\n${log()}`);
}

export interface ProxyProc extends Proc {
  url: string;
  port: number;
  /** The CA that signed its certificate (TLS listeners only). */
  caFile: string | null;
}

/** Real HAProxy in HTTP mode in front of `enginePort`, configured to stream: without `option http-no-delay`
 * HAProxy sends with MSG_MORE and the kernel holds small SSE chunks up to 200 ms, so short streams arrive
 * whole. `check` adds health checks (a server failing two is marked down: HAProxy answers 503 itself). */
/** HAProxy's limits in front of the engine: a per-server connection cap (`maxconn`, the rest wait in HAProxy's
 * queue for `timeout queue`, then get its 503) and `timeout server` (inactivity, then its 504). */
export interface HaproxyLimits {
  check?: boolean;
  serverMaxconn?: number;
  timeoutQueueS?: number;
  timeoutServerS?: number;
}

export async function startHaproxy(t: TestContext, bin: string, enginePort: number, options: HaproxyLimits = {}): Promise<ProxyProc> {
  const dir = tempDir(t, 'roundload-haproxy-');
  const port = await freePort();
  const check = options.check === true ? ' check inter 500ms fall 2 rise 1' : '';
  const conf = join(dir, 'haproxy.cfg');
  writeFileSync(
    conf,
    `# written by test/helpers/procs.ts
global
  maxconn 512
defaults
  mode http
  option http-no-delay
  timeout connect 2s
  timeout client 60s
  timeout server ${options.timeoutServerS ?? 60}s
  timeout queue ${options.timeoutQueueS ?? 60}s
  timeout http-keep-alive 60s
frontend fe
  bind 127.0.0.1:${port}
  default_backend be
backend be
${options.check === true ? '  option httpchk GET /health\n' : ''}  server engine 127.0.0.1:${enginePort}${check}${options.serverMaxconn === undefined ? '' : ` maxconn ${options.serverMaxconn}`}
`,
  );
  const proc = spawnProc(t, bin, ['-f', conf, '-db']);
  await listening(proc, port, 'haproxy', () => '');
  return Object.assign(proc, { url: `http://127.0.0.1:${port}`, port, caFile: null });
}

/** An nginx.conf for a streaming reverse proxy in `dir` (its pid, error log and temp folders there): one
 * keep-alive upstream, optional TLS, buffering, read timeout, idle keep-alive and body limit (nginx's own
 * defaults when not given). Shared by the tests and the fault-matrix bench. */
export function nginxConf(o: {
  dir: string;
  upstream: string;
  listen: string;
  certs: { certFile: string; keyFile: string } | null;
  buffering: boolean;
  readTimeoutS?: number;
  keepaliveTimeoutS?: number;
  clientMaxBodySize?: string;
  /** `limit_conn`: connections at once from one client address (nginx answers 503 past it). */
  limitConn?: number;
}): string {
  return `# written by test/helpers/procs.ts
daemon off;
master_process off;
worker_processes 1;
pid ${join(o.dir, 'nginx.pid')};
error_log ${join(o.dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${join(o.dir, 'tmp')}/body;
  proxy_temp_path ${join(o.dir, 'tmp')}/proxy;
  fastcgi_temp_path ${join(o.dir, 'tmp')}/fastcgi;
  uwsgi_temp_path ${join(o.dir, 'tmp')}/uwsgi;
  scgi_temp_path ${join(o.dir, 'tmp')}/scgi;
${o.limitConn === undefined ? '' : '  limit_conn_zone $binary_remote_addr zone=peraddr:1m;\n'}  upstream engine {
    server ${o.upstream};
    keepalive 16;
  }
  server {
    listen ${o.listen}${o.certs === null ? '' : ` ssl;\n    ssl_certificate ${o.certs.certFile};\n    ssl_certificate_key ${o.certs.keyFile}`};
    keepalive_timeout ${o.keepaliveTimeoutS ?? 75}s;
    client_max_body_size ${o.clientMaxBodySize ?? '1m'};
${o.limitConn === undefined ? '' : `    limit_conn peraddr ${o.limitConn};\n`}    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering ${o.buffering ? 'on' : 'off'};
      proxy_read_timeout ${o.readTimeoutS ?? 60}s;
    }
  }
}
`;
}

/**
 * Real nginx as the reverse proxy of a streaming deployment, buffering responses or not (`proxy_buffering`).
 * With `tls`, it terminates TLS with a certificate of a CA made here: behind TLS, `proxy_buffering on` holds a
 * stream whole (its 16 KiB TLS buffer is flushed only at the end), the misconfiguration people meet. Idle
 * keep-alive (`keepaliveTimeoutS`, default 75) and the body limit (`clientMaxBodySize`, nginx's default 1m) can be set.
 */
export async function startNginx(
  t: TestContext,
  bin: string,
  enginePort: number,
  options: { buffering: boolean; tls?: boolean; readTimeoutS?: number; keepaliveTimeoutS?: number; clientMaxBodySize?: string; limitConn?: number },
): Promise<ProxyProc> {
  const dir = tempDir(t, 'roundload-nginx-');
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const port = await freePort();
  const certs = options.tls === true ? await makeCertificates(join(dir, 'certs')) : null;
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConf({ dir, upstream: `127.0.0.1:${enginePort}`, listen: `127.0.0.1:${port}`, certs, ...options }));
  const proc = spawnProc(t, bin, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')]);
  const log = (): string => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
  await listening(proc, port, 'nginx', log);
  return Object.assign(proc, { url: `${certs === null ? 'http' : 'https'}://127.0.0.1:${port}`, port, caFile: certs?.caFile ?? null });
}

/** `roundload hop` as its own process in front of `upstream` with `faults` (`--fault` values); its URL and CA
 * once it listens. */
export async function spawnHop(t: TestContext, upstream: string, faults: readonly string[]): Promise<{ url: string; ca: string; proc: Proc }> {
  const proc = spawnCli(t, ['hop', '--listen', '127.0.0.1:0', '--upstream', upstream, ...faults.flatMap((f) => ['--fault', f])]);
  for (let i = 0; i < 600 && !proc.exited; i += 1) {
    const url = /listening on (https:\/\/\S+)/.exec(proc.stderr)?.[1];
    const ca = /curl --cacert\): (\S+)/.exec(proc.stderr)?.[1];
    if (url !== undefined && ca !== undefined) return { url, ca, proc };
    await sleep(50);
  }
  throw new Error(`the hop did not start: ${proc.stderr}`);
}

/** A busy loop pinned to `cpu` with `taskset`, taking that core from anything pinned beside it. */
export function busyLoop(t: TestContext, taskset: string, cpu: number): Proc {
  return spawnProc(t, taskset, ['-c', String(cpu), '/bin/sh', '-c', 'while :; do :; done']);
}

/** `roundload ARGS` (built or from source: `cliArgs`) as its own process group, its stderr kept. */
export function spawnCli(t: TestContext, args: readonly string[]): Proc {
  return spawnProc(t, process.execPath, cliArgs(...args));
}

/**
 * Pins every thread of `pid` to `cpu` and lowers it to nice 19: each thread (nice is per thread on Linux),
 * and its autogroup where the kernel groups sessions (`sched_autogroup`: nice only weighs inside a group,
 * and a process of its own session has a group of its own).
 */
export function starve(taskset: string, renice: string, pid: number, cpu: number): void {
  const pinned = spawnSync(taskset, ['-a', '-p', '-c', String(cpu), String(pid)], { encoding: 'utf8' });
  assert.equal(pinned.status, 0, `taskset: ${pinned.stderr}`);
  const threads = readdirSync(`/proc/${pid}/task`);
  const niced = spawnSync(renice, ['-n', '19', '-p', ...threads], { encoding: 'utf8' });
  assert.equal(niced.status, 0, `renice: ${niced.stderr}`);
  if (existsSync(`/proc/${pid}/autogroup`)) writeFileSync(`/proc/${pid}/autogroup`, '19');
}

/** Gives `pid` its cores back, and its priority where allowed (only a privileged process may lower nice again). */
export function release(taskset: string, renice: string, pid: number): void {
  spawnSync(taskset, ['-a', '-p', '-c', `0-${Math.max(0, availableParallelism() - 1)}`, String(pid)]);
  if (!existsSync(`/proc/${pid}/task`)) return;
  spawnSync(renice, ['-n', '0', '-p', ...readdirSync(`/proc/${pid}/task`)]);
  try {
    writeFileSync(`/proc/${pid}/autogroup`, '0');
  } catch {
    // not privileged: it stays at nice 19, which only slows the rest of the run
  }
}

/** The kernel's account of a thread (default: the main one): ms on a CPU and ms waiting on a run queue
 * for one (`/proc/<pid>/task/<tid>/schedstat`); null where the kernel does not keep it. */
export function schedstat(pid: number, tid = pid): { cpuMs: number; waitMs: number } | null {
  try {
    const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return cpu === undefined || wait === undefined ? null : { cpuMs: cpu / 1e6, waitMs: wait / 1e6 };
  } catch {
    return null;
  }
}

/**
 * A reverse proxy to `upstream` that, the moment an answer on a connection has gone out, never answers on that
 * connection again, keeping it open and still advertising keep-alive: a server that closes after every
 * streamed answer, as a client reusing the connection at once meets it (its next request waits for headers).
 * The closing is not on a timer, so no reuse however quick gets through (the hop's `idle_close` fires 1 ms
 * after an answer at the soonest, and sub-millisecond reuses won that race in most runs).
 */
const CLOSER = String.raw`
const http = require('node:http');
const [port, upstream] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true });
const closed = new WeakSet();
const server = http.createServer((req, res) => {
  if (closed.has(req.socket)) return;
  res.on('finish', () => closed.add(req.socket));
  const headers = { ...req.headers, host: new URL(upstream).host };
  const up = http.request(upstream + req.url, { method: req.method, headers, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
});
server.keepAliveTimeout = 0;
server.listen(Number(port), '127.0.0.1');
`;

export async function startCloser(t: TestContext, upstream: string): Promise<{ url: string; ca: null }> {
  const port = await freePort();
  const proc = new Proc(spawn(process.execPath, ['-e', CLOSER, String(port), upstream], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] }));
  t.after(() => proc.stop());
  for (let i = 0; i < 200 && !proc.exited; i += 1) {
    if (await canConnect(port)) return { url: `http://127.0.0.1:${port}`, ca: null };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the closer did not start: ${proc.stderr}`);
}

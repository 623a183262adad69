// Real parts for the diagnosis fault matrix beyond test/helpers/procs.ts: a cleanup scope that stands in for a
// test's context (so the e2e helpers can be used as they are), the engine and nginx inside network namespaces
// joined by veth pairs (a link taken down is a blackhole), and an HTTP CONNECT proxy as its own process.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestContext } from 'node:test';
import { Proc, canConnect, findExecutable, freePort, nginxConf, type MonitorTarget } from '../test/helpers/procs.js';
import { cliArgs, ROOT } from '../test/helpers/root.js';

/**
 * What one scenario run started, stopped newest first by `close()` however the run ended (a failure, its time
 * limit): processes, namespaces, folders. The helpers of test/helpers take a test context only for its
 * `after()`; `context()` hands them this scope in that shape.
 */
export class Scope {
  readonly #afters: (() => unknown)[] = [];

  after(fn: () => unknown): void {
    this.#afters.push(fn);
  }

  /** This scope as the helpers' test context: only `after` is ever called on it (`skip` and `diagnostic` are
   * here too, as no-ops with a reason kept, for the helpers that would call them). */
  context(): TestContext {
    const self = { after: (fn: () => unknown) => this.after(fn), skip: () => undefined, diagnostic: () => undefined };
    return self as unknown as TestContext;
  }

  tempDir(prefix = 'roundload-matrix-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.after(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  async close(): Promise<void> {
    while (this.#afters.length > 0) {
      try {
        await this.#afters.pop()!();
      } catch {
        // each closer is bounded and best-effort: the next one still runs
      }
    }
  }
}

/** A process in its own group, stopped (thawed first, SIGTERM then SIGKILL) when the scope closes. */
export function spawnIn(scope: Scope, command: string, args: readonly string[]): Proc {
  const proc = new Proc(spawn(command, args, { cwd: ROOT, detached: true, stdio: ['ignore', 'ignore', 'pipe'] }));
  scope.after(() => proc.stop());
  return proc;
}

/** iproute2's `ip` (root only, for namespaces and veth pairs). */
function ipBin(): string {
  const bin = findExecutable('ip');
  if (bin === null) throw new Error('ip (iproute2) is not installed: the network-namespace scenarios need it');
  return bin;
}

function ip(...args: string[]): void {
  const r = spawnSync(ipBin(), args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** Names unique to this process (interface names are at most 15 characters). */
const TAG = `rlm${process.pid % 100_000}`;

/**
 * Three parts in three network namespaces' worth of places: the client in the host's, the engine in `E`, the
 * proxy in `P`, joined by three veth pairs — client↔engine (10.213.0.1 ↔ .2: canaries and scrapes go
 * straight), client↔proxy (10.213.1.1 ↔ .2) and proxy↔engine (10.213.2.1 ↔ .2). Taking down the far end of a
 * pair leaves the near end without carrier and its route in place: packets sent there are dropped, a
 * blackhole (a timeout, never a refusal). Removed when the scope closes.
 */
export interface Net {
  engineNs: string;
  proxyNs: string;
  /** The engine as the client reaches it, and as the proxy does. */
  engineForClient: string;
  engineForProxy: string;
  proxyForClient: string;
  /** Blackholes one path until `restore`. */
  cut(path: 'proxy-engine' | 'client-proxy'): void;
  restore(path: 'proxy-engine' | 'client-proxy'): void;
}

export function makeNet(scope: Scope): Net {
  const engineNs = `${TAG}e`;
  const proxyNs = `${TAG}p`;
  const links = { ce: `${TAG}ce`, cp: `${TAG}cp`, pe: `${TAG}pe` };
  scope.after(() => {
    const bin = ipBin();
    for (const name of Object.values(links)) spawnSync(bin, ['link', 'del', `${name}0`]);
    spawnSync(bin, ['-n', proxyNs, 'link', 'del', `${links.pe}0`]);
    spawnSync(bin, ['netns', 'del', engineNs]);
    spawnSync(bin, ['netns', 'del', proxyNs]);
  });
  ip('netns', 'add', engineNs);
  ip('netns', 'add', proxyNs);
  for (const ns of [engineNs, proxyNs]) ip('-n', ns, 'link', 'set', 'lo', 'up');
  const pair = (name: string, near: string | null, far: string, subnet: number): void => {
    ip('link', 'add', `${name}0`, 'type', 'veth', 'peer', 'name', `${name}1`);
    if (near !== null) ip('link', 'set', `${name}0`, 'netns', near);
    ip('link', 'set', `${name}1`, 'netns', far);
    const nearIp = near === null ? [] : ['-n', near];
    ip(...nearIp, 'addr', 'add', `10.213.${subnet}.1/30`, 'dev', `${name}0`);
    ip(...nearIp, 'link', 'set', `${name}0`, 'up');
    ip('-n', far, 'addr', 'add', `10.213.${subnet}.2/30`, 'dev', `${name}1`);
    ip('-n', far, 'link', 'set', `${name}1`, 'up');
  };
  pair(links.ce, null, engineNs, 0);
  pair(links.cp, null, proxyNs, 1);
  pair(links.pe, proxyNs, engineNs, 2);
  // The far end of each path: the engine's end of proxy↔engine, the proxy's end of client↔proxy.
  const far = { 'proxy-engine': [engineNs, `${links.pe}1`], 'client-proxy': [proxyNs, `${links.cp}1`] } as const;
  return {
    engineNs,
    proxyNs,
    engineForClient: '10.213.0.2',
    engineForProxy: '10.213.2.2',
    proxyForClient: '10.213.1.2',
    cut: (path) => ip('-n', far[path][0], 'link', 'set', far[path][1], 'down'),
    restore: (path) => ip('-n', far[path][0], 'link', 'set', far[path][1], 'up'),
  };
}

export interface NsEngine {
  proc: Proc;
  url: string;
  port: number;
  targets: MonitorTarget[];
}

/** `roundload engine --topology single` inside namespace `ns`, listening on every address there (only the
 * namespace's veths reach it); `url` and its /metrics as `host` names it. */
export async function spawnEngineInNs(scope: Scope, ns: string, host: string, settings: Record<string, unknown>): Promise<NsEngine> {
  const dir = scope.tempDir('roundload-engine-');
  const file = join(dir, 'engine.yaml');
  writeFileSync(file, JSON.stringify(settings));
  const proc = spawnIn(scope, ipBin(), ['netns', 'exec', ns, process.execPath, ...cliArgs('engine', '--host', '0.0.0.0', '--port', '0', '--topology', 'single', '--settings', file)]);
  for (let i = 0; i < 1200 && !proc.exited; i += 1) {
    const m = /roundload engine listening on http:\/\/[^:]+:(\d+)/.exec(proc.stderr);
    if (m !== null) {
      const port = Number(m[1]);
      const url = `http://${host}:${port}`;
      return { proc, url, port, targets: [{ name: 'engine', url: `${url}/metrics` }] };
    }
    await sleep(25);
  }
  throw new Error(`the engine in ${ns} did not start: ${proc.stderr}`);
}

/** nginx inside namespace `ns`, listening on `listen` (plain HTTP, streaming: buffering off) in front of
 * `upstream` (host:port). */
export async function startNginxInNs(scope: Scope, bin: string, ns: string, listen: string, upstream: string): Promise<{ proc: Proc; url: string }> {
  const dir = scope.tempDir('roundload-nginx-');
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConf({ dir, upstream, listen: `${listen}:${port}`, certs: null, buffering: false }));
  const proc = spawnIn(scope, ipBin(), ['netns', 'exec', ns, bin, '-p', dir, '-c', conf, '-e', join(dir, 'error.log')]);
  const url = `http://${listen}:${port}`;
  for (let i = 0; i < 200 && !proc.exited; i += 1) {
    if (await reachable(listen, port)) return { proc, url };
    await sleep(25);
  }
  throw new Error(`nginx in ${ns} did not start: ${proc.stderr}`);
}

/** Whether a TCP connection to host:port opens within half a second. */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
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

/** bench/connect-proxy.mjs (a plain CONNECT tunnel, nothing else) as its own process, so it can be frozen. */
export async function startConnectProxy(scope: Scope): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc = spawnIn(scope, process.execPath, [join(ROOT, 'bench/connect-proxy.mjs'), String(port)]);
  for (let i = 0; i < 200 && !proc.exited; i += 1) {
    if (await canConnect(port)) return { proc, url: `http://127.0.0.1:${port}` };
    await sleep(25);
  }
  throw new Error(`the CONNECT proxy did not start: ${proc.stderr}`);
}

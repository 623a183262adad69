// Parts of the fault matrix that roundload did not write: llama.cpp's llama-server (a real engine, on CPU, with
// the tiny tool-calling model of ../shared/models), and squid as an HTTP CONNECT proxy. The diagnosis was never
// tuned on them; a run against them is a test of what generalizes. Each part is bounded in time and stopped
// when its scope closes.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { canConnect, findExecutable, freePort, type EngineProc, type Proc } from '../test/helpers/procs.js';
import { ROOT } from '../test/helpers/root.js';
import { spawnIn, type Scope } from './diagnosis-parts.js';

/** The tiny tool-calling model (1.2 MB, random weights, real llama.cpp tokenizer and template). */
const TINY_MODEL = resolve(ROOT, '..', 'shared', 'models', 'tiny-tools.gguf');

/**
 * Where scripts/build-llama-server.sh left llama-server, or ROUNDLOAD_LLAMA_SERVER; null when it was never
 * built (the build takes ~20 min on two cores and is never started from here).
 */
export function llamaServerBin(): string | null {
  const named = process.env.ROUNDLOAD_LLAMA_SERVER;
  if (named !== undefined && named !== '') return existsSync(named) ? named : null;
  const r = spawnSync(join(ROOT, 'scripts', 'build-llama-server.sh'), ['--where'], { encoding: 'utf8', timeout: 10_000 });
  const path = r.stdout.trim();
  return r.status === 0 && path !== '' && existsSync(path) ? path : null;
}

/** Why the foreign-engine scenarios cannot run here, or null when they can. */
export function foreignEngineMissing(): string | null {
  if (!existsSync(TINY_MODEL)) return `the tiny model is not at ${TINY_MODEL}`;
  if (llamaServerBin() === null) return 'llama-server is not built: run scripts/build-llama-server.sh once (~20 min), or set ROUNDLOAD_LLAMA_SERVER';
  return null;
}

async function answers(url: string, path: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * llama-server with the tiny model on 127.0.0.1 (`port`, or a free one), its Prometheus metrics on (`/metrics`,
 * the `llamacpp:` family), `parallel` slots; resolves once /health answers 200 (the model loaded), within 60 s.
 */
export async function spawnLlamaServer(scope: Scope, options: { port?: number; parallel?: number; extraArgs?: readonly string[] } = {}): Promise<EngineProc> {
  const bin = llamaServerBin();
  if (bin === null) throw new Error(foreignEngineMissing() ?? 'llama-server is missing');
  const port = options.port ?? (await freePort());
  const parallel = options.parallel ?? 8;
  const args = ['-m', TINY_MODEL, '--jinja', '--metrics', '--host', '127.0.0.1', '--port', String(port)];
  // A context big enough for every slot's growing conversation; one thread: the client and proxies share two cores.
  args.push('--parallel', String(parallel), '-c', String(8192 * parallel), '--threads', '1', '--no-webui', ...(options.extraArgs ?? []));
  const proc = spawnIn(scope, bin, args);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240 && !proc.exited; i += 1) {
    if ((await canConnect(port)) && (await answers(url, '/health', 1000))) {
      return Object.assign(proc, { url, port, targets: [{ name: 'engine', url: `${url}/metrics` }] });
    }
    await sleep(250);
  }
  await proc.stop();
  throw new Error(`llama-server did not become healthy in 60 s: ${proc.stderr.slice(-800)}`);
}

/** squid as a plain HTTP CONNECT proxy on 127.0.0.1 (CONNECT to any port allowed, no cache, no logs but its
 * own in a temp folder), in the foreground (-N: one process, so SIGSTOP freezes all of it). */
export async function startSquid(scope: Scope): Promise<{ proc: Proc; url: string }> {
  const bin = findExecutable('squid');
  if (bin === null) throw new Error('squid is not installed (apt-get install squid)');
  const dir = mkdtempSync(join(tmpdir(), 'roundload-squid-'));
  // squid drops to its own user: its folder must be writable by it.
  chmodSync(dir, 0o777);
  scope.after(() => spawnSync('rm', ['-rf', dir]));
  const port = await freePort();
  const conf = join(dir, 'squid.conf');
  writeFileSync(
    conf,
    `# written by bench/diagnosis-foreign.ts
http_port 127.0.0.1:${port}
acl CONNECT method CONNECT
http_access allow localhost
http_access deny all
cache deny all
access_log none
cache_log ${join(dir, 'cache.log')}
pid_filename ${join(dir, 'squid.pid')}
coredump_dir ${dir}
shutdown_lifetime 0 seconds
`,
  );
  const proc = spawnIn(scope, bin, ['-N', '-f', conf]);
  for (let i = 0; i < 200 && !proc.exited; i += 1) {
    if (await canConnect(port)) return { proc, url: `http://127.0.0.1:${port}` };
    await sleep(50);
  }
  await proc.stop();
  throw new Error(`squid did not start: ${proc.stderr.slice(-800)}`);
}

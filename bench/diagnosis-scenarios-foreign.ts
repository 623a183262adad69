// Fault-matrix scenarios the diagnosis was not written against: the same kinds of fault on an engine roundload
// did not write (llama.cpp's llama-server on CPU), and limits of real proxies (HAProxy's maxconn queue and
// timeout server, nginx's limit_conn, squid on a CONNECT path, a hop adding latency). The expected verdict is
// what the fault is, whatever the diagnosis says.
import type { Summary } from '../src/analysis/index.js';
import { findExecutable, freePort, spawnEngine, startHaproxy, startNginx, type EngineProc, type HaproxyLimits } from '../test/helpers/procs.js';
import { foreignEngineMissing, spawnLlamaServer, startSquid } from './diagnosis-foreign.js';
import type { Scope } from './diagnosis-parts.js';
import { runInProcess, type Acts, type RunSpec } from './diagnosis-run.js';
import type { Scenario } from './diagnosis-scenarios.js';

function tool(name: string): string {
  const bin = findExecutable(name);
  if (bin === null) throw new Error(`${name} is not installed (apt-get install ${name})`);
  return bin;
}

const tlsProxy = (url: string): string => `{kind: tls-proxy, url: "${url}"}`;
const freeze = (proc: { freeze(): void; thaw(): void }): Acts => [
  [1000, () => proc.freeze()],
  [3000, () => proc.thaw()],
];

/** The embedded single engine, fast. */
const single = (scope: Scope, settings: Record<string, unknown> = {}): Promise<EngineProc> =>
  spawnEngine(scope.context(), { topology: 'single', decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0, ...settings });

/** The foreign engine, failing the scenario at once (with what to do) where it was never built. */
async function llama(scope: Scope, options: Parameters<typeof spawnLlamaServer>[1] = {}): Promise<EngineProc> {
  const missing = foreignEngineMissing();
  if (missing !== null) throw new Error(missing);
  return spawnLlamaServer(scope, options);
}

const haproxy = (scope: Scope, port: number, limits: HaproxyLimits = {}) => startHaproxy(scope.context(), tool('haproxy'), port, limits);
const nginx = (scope: Scope, port: number, options: Parameters<typeof startNginx>[3] = { buffering: false }) => startNginx(scope.context(), tool('nginx'), port, options);

/** The tiny model answers with a tool call of 37-48 tokens: room for it. */
const LLAMA_SET = ['conversation.max_tokens=64'];

function onLlama(spec: Omit<RunSpec, 'engine'> & { set?: readonly string[] }): Omit<RunSpec, 'engine'> {
  return { ...spec, set: [...LLAMA_SET, ...(spec.set ?? [])] };
}

async function llamaBehind(
  scope: Scope,
  signal: AbortSignal,
  front: 'haproxy' | 'nginx' | 'nginx-tls',
  act: (engine: EngineProc, proxy: { freeze(): void; thaw(): void; kill(): Promise<void> }) => Acts,
): Promise<Summary> {
  const engine = await llama(scope);
  const proxy = front === 'haproxy' ? await haproxy(scope, engine.port) : await nginx(scope, engine.port, { buffering: false, tls: front === 'nginx-tls' });
  return runInProcess(scope, { engine, via: tlsProxy(proxy.url), caFile: proxy.caFile, ...onLlama({ acts: act(engine, proxy) }) }, signal);
}

export const FOREIGN_ENGINE: readonly Scenario[] = [
  {
    name: 'llama-frozen-haproxy',
    family: 'engine down/restart',
    needs: foreignEngineMissing,
    expected: ['engine'],
    fault: 'llama-server SIGSTOPped for 2 s behind HAProxy',
    run: (scope, signal) => llamaBehind(scope, signal, 'haproxy', (engine) => freeze(engine)),
  },
  {
    name: 'llama-frozen-nginx-tls',
    family: 'engine down/restart',
    needs: foreignEngineMissing,
    expected: ['engine'],
    fault: 'llama-server SIGSTOPped for 2 s behind nginx terminating TLS',
    run: (scope, signal) => llamaBehind(scope, signal, 'nginx-tls', (engine) => freeze(engine)),
  },
  {
    name: 'llama-killed-nginx',
    family: 'engine down/restart',
    needs: foreignEngineMissing,
    expected: ['engine'],
    fault: 'llama-server SIGKILLed 1 s in, not restarted, behind nginx (which answers 502)',
    run: (scope, signal) => llamaBehind(scope, signal, 'nginx', (engine) => [[1000, () => engine.kill()]]),
  },
  {
    name: 'llama-restarted-haproxy',
    family: 'engine down/restart',
    needs: foreignEngineMissing,
    expected: ['engine'],
    fault: 'llama-server SIGKILLed 1 s in and started again on its port, behind HAProxy',
    run: async (scope, signal) => {
      const engine = await llama(scope);
      const proxy = await haproxy(scope, engine.port);
      const restart = async (): Promise<void> => {
        await engine.kill();
        await llama(scope, { port: engine.port });
      };
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), ...onLlama({ acts: [[1000, restart]], set: ['duration=6s'] }) }, signal);
    },
  },
  {
    name: 'llama-haproxy-frozen',
    family: 'proxy stall',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: 'HAProxy SIGSTOPped for 2 s in front of a healthy llama-server',
    run: (scope, signal) => llamaBehind(scope, signal, 'haproxy', (_engine, proxy) => freeze(proxy)),
  },
  {
    name: 'llama-nginx-killed',
    family: 'proxy stall',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: 'nginx SIGKILLed 1 s in, llama-server healthy',
    run: (scope, signal) => llamaBehind(scope, signal, 'nginx', (_engine, proxy) => [[1000, () => proxy.kill()]]),
  },
  {
    name: 'llama-nginx-502-upstream-down',
    family: 'proxy timeouts and limits',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: "nginx's upstream points at a closed port (its own 502 at once), llama-server healthy, scraped and canaried",
    run: async (scope, signal) => {
      const engine = await llama(scope);
      const proxy = await nginx(scope, await freePort());
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), ...onLlama({}) }, signal);
    },
  },
  {
    name: 'llama-hop-stall-reused',
    family: 'proxy stall',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: "the built-in hop stops answering a connection's 3rd request on, llama-server healthy",
    run: async (scope, signal) => runInProcess(scope, { engine: await llama(scope), via: '{kind: hop, faults: [{kind: stall, after_requests: 2}]}', ...onLlama({}) }, signal),
  },
  {
    name: 'llama-hop-stall-share',
    family: 'proxy stall',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: "the built-in hop stalls a seeded quarter of the requests past each connection's first, llama-server healthy, one canary a leg in the run (nothing to compare the legs on)",
    run: async (scope, signal) =>
      runInProcess(
        scope,
        {
          engine: await llama(scope),
          via: '{kind: hop, faults: [{kind: stall, after_requests: 1, ratio: 0.25, seed: 3}]}',
          ...onLlama({ set: ['duration=8s', 'agents.count=6', 'monitor.canary_interval_s=30'] }),
        },
        signal,
      ),
  },
  {
    name: 'llama-hop-latency',
    family: 'proxy latency',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: 'the built-in hop holds every request 1.3-1.6 s before forwarding it (past the 800 ms headers deadline), llama-server fast',
    run: async (scope, signal) => runInProcess(scope, { engine: await llama(scope), via: '{kind: hop, faults: [{kind: latency, ms: 1300, jitter_ms: 300}]}', ...onLlama({}) }, signal),
  },
  {
    name: 'llama-squid-connect-frozen',
    family: 'proxy stall',
    needs: foreignEngineMissing,
    expected: ['proxy'],
    fault: 'squid, the CONNECT proxy on the path, SIGSTOPped for 2 s; llama-server healthy (target.bypass: the direct leg)',
    run: async (scope, signal) => {
      const engine = await llama(scope);
      const proxy = await startSquid(scope);
      return runInProcess(scope, { engine, via: `{kind: connect, url: "${proxy.url}"}`, ...onLlama({ set: [`target.bypass=${engine.url}`], acts: freeze(proxy.proc) }) }, signal);
    },
  },
  {
    name: 'llama-healthy-nginx-tls',
    family: 'healthy-but-odd servers',
    needs: foreignEngineMissing,
    expected: ['none'],
    fault: 'nothing: llama-server behind nginx terminating TLS',
    run: (scope, signal) => llamaBehind(scope, signal, 'nginx-tls', () => []),
  },
  {
    name: 'llama-healthy-squid-connect',
    family: 'healthy-but-odd servers',
    needs: foreignEngineMissing,
    expected: ['none'],
    fault: 'nothing: llama-server through squid as a CONNECT proxy',
    run: async (scope, signal) => {
      const engine = await llama(scope);
      const proxy = await startSquid(scope);
      return runInProcess(scope, { engine, via: `{kind: connect, url: "${proxy.url}"}`, ...onLlama({ set: [`target.bypass=${engine.url}`] }) }, signal);
    },
  },
];

/** Limits of real proxies, on the embedded engine. */
export const PROXY_LIMITS: readonly Scenario[] = [
  {
    name: 'haproxy-maxconn-queue',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: "HAProxy lets 2 connections at once reach the engine (server maxconn 2, timeout queue 1s) for 8 agents: the rest wait in HAProxy's queue, then get its 503; the engine idle and fast",
    run: async (scope, signal) => {
      const engine = await single(scope, { decode_step_ms: 40 });
      const proxy = await haproxy(scope, engine.port, { serverMaxconn: 2, timeoutQueueS: 1 });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: ['agents.count=8', 'agents.think_time_ms=20'] }, signal);
    },
  },
  {
    name: 'haproxy-timeout-server',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: "HAProxy's timeout server 1s in front of a 1.5-2 s prefill: HAProxy answers 504 before the first byte (the watchdog waits longer)",
    run: async (scope, signal) => {
      const engine = await single(scope, { prefill_ms_per_1k_tokens: 6000 });
      const proxy = await haproxy(scope, engine.port, { timeoutServerS: 1 });
      const set = ['agents.count=3', 'duration=5s', 'watchdog.headers_ms=4000', 'watchdog.first_token_ms=5000', 'watchdog.stall_ms=5000', 'watchdog.total_ms=6000'];
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: [...set, 'monitor.interval_ms=250', 'monitor.canary_interval_s=0.5', 'monitor.canary_timeout_ms=1000'] }, signal);
    },
  },
  {
    name: 'nginx-limit-conn',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: "nginx limit_conn 2 per client address for 6 keep-alive agents: nginx's own 503 to the connections past the limit; the engine healthy",
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port, { buffering: false, limitConn: 2 });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: ['agents.count=6'] }, signal);
    },
  },
  {
    name: 'hop-latency-slow-path',
    family: 'proxy latency',
    expected: ['proxy'],
    fault: 'the built-in hop holds every request 0.9-1.4 s (past the 800 ms headers deadline), the embedded engine fast',
    run: async (scope, signal) => runInProcess(scope, { engine: await single(scope), via: '{kind: hop, faults: [{kind: latency, ms: 900, jitter_ms: 500}]}' }, signal),
  },
  {
    name: 'squid-connect-frozen',
    family: 'proxy stall',
    needs: () => (findExecutable('squid') === null ? 'squid is not installed (apt-get install squid)' : null),
    expected: ['proxy'],
    fault: 'squid as the CONNECT proxy SIGSTOPped for 2 s, the embedded engine healthy (target.bypass: the direct leg)',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await startSquid(scope);
      return runInProcess(scope, { engine, via: `{kind: connect, url: "${proxy.url}"}`, set: [`target.bypass=${engine.url}`], acts: freeze(proxy.proc) }, signal);
    },
  },
];

/** An engine whose prefill time grows with the part of the prompt it has not cached: each round's tool result
 * larger than the last, so later rounds' first tokens come past the deadline while small requests (the
 * canaries) stay fast. The engine is slow for long prompts, however fast its canaries. */
function longPrompts(growthTokens: number): readonly string[] {
  return ['conversation.tool_result_tokens=100', `conversation.tool_result_growth_tokens=${growthTokens}`, 'conversation.max_context_tokens=60000', 'duration=6s'];
}

export const SIZE_DEPENDENT: readonly Scenario[] = [
  {
    name: 'engine-slow-long-prompts-nginx',
    family: 'size-dependent engine slowness',
    expected: ['engine', 'engine_overloaded'],
    fault:
      "2 agents, the single engine's prefill 500 ms per 1k uncached tokens, each round's tool result 600 tokens longer than the last, behind nginx: from round 4 or so the first token comes past the 1 s deadline; canaries fast",
    run: async (scope, signal) => {
      const engine = await single(scope, { prefill_ms_per_1k_tokens: 500 });
      const proxy = await nginx(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: [...longPrompts(600), 'agents.count=2'] }, signal);
    },
  },
  {
    name: 'engine-slow-long-prompts-pd-haproxy',
    family: 'size-dependent engine slowness',
    expected: ['engine', 'engine_overloaded'],
    fault: "PD, the prefill server 600 ms per 1k uncached tokens, each round's tool result 500 tokens longer, behind HAProxy: later rounds' first tokens past the deadline, canaries fast",
    run: async (scope, signal) => {
      const engine = await spawnEngine(scope.context(), { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0, prefill_ms_per_1k_tokens: 600 });
      const proxy = await haproxy(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: longPrompts(500) }, signal);
    },
  },
];

// Probes: variants of issue 41's classes in numbers and parts the matrix did not hold, written after it to look
// for what it misses (`npm run bench -- diagnosis --probe [--runs N]`). Not part of the matrix and not held to
// its goals: a probe that finds a miss becomes a matrix scenario with other numbers once fixed (the decode
// stalls here became pd-decode-paused-nginx). Results in docs/diagnosis.md, "A decode that stops, then goes on".
import { spawn } from 'node:child_process';
import { canConnect, findExecutable, freePort, Proc, spawnEngine, startCloser, startHaproxy, startNginx, type EngineProc } from '../test/helpers/procs.js';
import { stalledClient, throttle } from '../test/helpers/real-parts.js';
import { foreignEngineMissing, spawnLlamaServer } from './diagnosis-foreign.js';
import type { Scope } from './diagnosis-parts.js';
import { runInProcess } from './diagnosis-run.js';
import type { Scenario } from './diagnosis-scenarios.js';

/** The embedded engine, fast: short answers, quick steps. */
const FAST = { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };
const single = (scope: Scope, settings: Record<string, unknown> = {}): Promise<EngineProc> => spawnEngine(scope.context(), { topology: 'single', ...FAST, ...settings });
/** The PD engine with its decode loop stopped `seconds` once, at `round`. */
const decodeStalled = (scope: Scope, round: number, seconds: number): Promise<EngineProc> =>
  spawnEngine(scope.context(), { ...FAST, faults: [{ kind: 'decode_stall', from_round: round, times: 1, duration_s: seconds }] });
const tlsProxy = (url: string): string => `{kind: tls-proxy, url: "${url}"}`;

/** A TCP relay (its own process) delaying every chunk by `delayMs` each way. */
const RELAY = String.raw`
const net = require('node:net');
const [port, upPort, delay] = process.argv.slice(1).map(Number);
net.createServer((c) => {
  const u = net.connect(upPort, '127.0.0.1');
  const pipe = (a, b) => { a.on('data', (d) => setTimeout(() => b.destroyed || b.write(d), delay)); a.on('close', () => setTimeout(() => b.destroy(), delay)); a.on('error', () => {}); };
  pipe(c, u); pipe(u, c);
}).listen(port, '127.0.0.1');
`;
async function startRelay(scope: Scope, upPort: number, delayMs: number): Promise<string> {
  const port = await freePort();
  const proc = new Proc(spawn(process.execPath, ['-e', RELAY, String(port), String(upPort), String(delayMs)], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] }));
  scope.after(() => proc.stop());
  for (let i = 0; i < 200 && !proc.exited; i += 1) {
    if (await canConnect(port)) return `http://127.0.0.1:${port}`;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('relay did not start');
}

export const PROBES: readonly Scenario[] = [
  {
    name: 'probe-tcp-relay-latency',
    family: 'proxy latency',
    expected: ['proxy'],
    fault: 'a TCP relay (not roundload) delaying each chunk 450 ms each way, from the start',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const url = await startRelay(scope, engine.port, 450);
      return runInProcess(scope, { engine, via: tlsProxy(url), set: ['duration=6s'] }, signal);
    },
  },
  {
    name: 'probe-hop-stall-10pct',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'hop stalls 10% of requests, 8 agents, canaries every 3 s, PD engine',
    run: async (scope, signal) => {
      const engine = await spawnEngine(scope.context(), FAST);
      return runInProcess(
        scope,
        { engine, via: '{kind: hop, faults: [{kind: stall, after_requests: 1, ratio: 0.1, seed: 11}]}', set: ['duration=8s', 'agents.count=8', 'monitor.canary_interval_s=3'] },
        signal,
      );
    },
  },
  {
    name: 'probe-closer-thinking',
    family: 'healthy-but-odd servers',
    expected: ['proxy'],
    fault: 'the closer, agents thinking 200 ms',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const closer = await startCloser(scope.context(), engine.url);
      return runInProcess(scope, { engine, via: tlsProxy(closer.url), set: ['agents.think_time_ms=200', 'duration=6s'] }, signal);
    },
  },
  {
    name: 'probe-nginx-idle-1s',
    family: 'healthy-but-odd servers',
    expected: ['none'],
    fault: 'nginx keepalive_timeout 1 s, agents thinking 1.5 s: nginx closes idle connections cleanly and the client reconnects, nothing fails',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await startNginx(scope.context(), findExecutable('nginx')!, engine.port, { buffering: false, keepaliveTimeoutS: 1 });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: ['agents.think_time_ms=1500', 'duration=9s'] }, signal);
    },
  },
  {
    name: 'probe-haproxy-frozen-client-late',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: "HAProxy SIGSTOPped 3 s while the client's loop blocks 0.8 s inside it",
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await startHaproxy(scope.context(), findExecutable('haproxy')!, engine.port);
      const client = stalledClient();
      return runInProcess(
        scope,
        {
          engine,
          via: tlsProxy(proxy.url),
          set: ['duration=6s'],
          acts: [
            [1000, () => proxy.freeze()],
            [1800, () => client.stall(800)],
            [4000, () => proxy.thaw()],
          ],
          clientSample: client.sample,
        },
        signal,
      );
    },
  },
  {
    name: 'probe-llama-throttled-nginx',
    family: 'overload',
    needs: foreignEngineMissing,
    expected: ['engine', 'engine_overloaded'],
    fault: 'llama-server throttled (SIGSTOP 1 s / SIGCONT 100 ms) for 3 s behind nginx',
    run: async (scope, signal) => {
      const engine = await spawnLlamaServer(scope);
      const proxy = await startNginx(scope.context(), findExecutable('nginx')!, engine.port, { buffering: false });
      return runInProcess(
        scope,
        { engine, via: tlsProxy(proxy.url), set: ['conversation.max_tokens=64', 'duration=6s', 'monitor.canary_timeout_ms=2000'], acts: throttle(engine, 1000, 3000) },
        signal,
      );
    },
  },
  {
    name: 'probe-engine-long-prompts-direct',
    family: 'size-dependent engine slowness',
    expected: ['engine', 'engine_overloaded'],
    fault: 'embedded engine, 500 ms per 1k uncached tokens, tool results growing 400 tokens a round, no proxy',
    run: async (scope, signal) => {
      const engine = await single(scope, { prefill_ms_per_1k_tokens: 500 });
      return runInProcess(scope, { engine, set: ['duration=8s', 'agents.rounds=40', 'conversation.tool_result_growth_tokens=400'] }, signal);
    },
  },
  {
    name: 'probe-pd-decode-stall-behind-hop',
    family: 'decode stalls',
    expected: ['engine'],
    fault: 'PD engine decode loop stopped 3 s at round 3 behind a healthy built-in hop',
    run: async (scope, signal) => {
      const engine = await decodeStalled(scope, 3, 3);
      return runInProcess(scope, { engine, via: '{kind: hop}', set: ['duration=6s'] }, signal);
    },
  },
  {
    name: 'probe-pd-decode-stall-2s-8-agents',
    family: 'decode stalls',
    expected: ['engine'],
    fault: 'PD engine decode loop stopped 2 s at round 5, 8 agents, straight to the router',
    run: async (scope, signal) => {
      const engine = await decodeStalled(scope, 5, 2);
      return runInProcess(scope, { engine, set: ['duration=6s', 'agents.count=8'] }, signal);
    },
  },
  {
    name: 'probe-llama-hop-latency-small',
    family: 'proxy latency',
    needs: foreignEngineMissing,
    expected: ['none'],
    fault: 'llama-server healthy, a TCP relay adding 350 ms each way: slower, within every deadline, nothing fails',
    run: async (scope, signal) => {
      const engine = await spawnLlamaServer(scope);
      const url = await startRelay(scope, engine.port, 350);
      return runInProcess(scope, { engine, via: tlsProxy(url), set: ['conversation.max_tokens=64', 'duration=6s'] }, signal);
    },
  },
];

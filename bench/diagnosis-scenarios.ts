// The fault matrix's scenarios: each a fault made real on real parts (the embedded engine as its own process,
// PD or single; nginx and HAProxy; the built-in hop; a CONNECT proxy; network namespaces), and the verdict a
// correct diagnosis gives for it — what the fault really is, never what the diagnosis happens to say.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Summary } from '../src/analysis/index.js';
import type { DiagnosisVerdict } from '../src/types/index.js';
import { busyLoop, findExecutable, freePort, release, spawnEngine, starve, startHaproxy, startNginx, type EngineProc } from '../test/helpers/procs.js';
import { makeNet, Scope, spawnEngineInNs, startConnectProxy, startNginxInNs } from './diagnosis-parts.js';
import { runAsChild, runInProcess, type Acts, type RunSpec } from './diagnosis-run.js';
import { FOREIGN_ENGINE, PROXY_LIMITS, SIZE_DEPENDENT } from './diagnosis-scenarios-foreign.js';
import { CLASSES } from './diagnosis-scenarios-classes.js';

/** The families of faults the matrix is scored by, one held out at a time (issue 41). */
export const FAMILIES = [
  'proxy stall',
  'proxy latency',
  'proxy buffering',
  'proxy timeouts and limits',
  'PD queue pins',
  'decode stalls',
  'size-dependent engine slowness',
  'engine down/restart',
  'overload',
  'client starvation',
  'network',
  'healthy-but-odd servers',
] as const;
export type Family = (typeof FAMILIES)[number];

export interface Scenario {
  name: string;
  /** The family of faults it belongs to (leave-one-family-out scores hold each out in turn). */
  family: Family;
  /** Why it cannot run on this machine (a part not installed or not built), or null: a scenario that needs what
   * is missing is skipped and said, never scored. @default always runs */
  needs?: () => string | null;
  /** The verdicts a correct diagnosis may give (more than one where the fault is honestly both). */
  expected: readonly DiagnosisVerdict[];
  /** The fault, in a line. */
  fault: string;
  /** One run: sets the parts up in `scope` (closed by the caller, whatever happens) and returns the summary. */
  run: (scope: Scope, signal: AbortSignal) => Promise<Summary>;
}

/** A fast engine: short answers, quick steps, gauges always live. */
const ENGINE = { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 };

function tool(name: string): string {
  const bin = findExecutable(name);
  if (bin === null) throw new Error(`${name} is not installed (apt-get install ${name})`);
  return bin;
}

const single = (scope: Scope, settings: Record<string, unknown> = {}, args: readonly string[] = []): Promise<EngineProc> =>
  spawnEngine(scope.context(), { topology: 'single', ...ENGINE, ...settings }, args);
const pd = (scope: Scope, settings: Record<string, unknown> = {}): Promise<EngineProc> => spawnEngine(scope.context(), { ...ENGINE, ...settings });
const nginx = (scope: Scope, port: number, options: Parameters<typeof startNginx>[3] = { buffering: false }) => startNginx(scope.context(), tool('nginx'), port, options);
// Without health checks: the helper's checks (every 500 ms, so a 500 ms check timeout) fail on the embedded
// engine's /health, which takes a second or more, and HAProxy would mark it down from the first second.
const haproxy = (scope: Scope, port: number) => startHaproxy(scope.context(), tool('haproxy'), port);
const tlsProxy = (url: string): string => `{kind: tls-proxy, url: "${url}"}`;

/** Stops `proc` (SIGSTOP) 1 s into the run for 2 s. */
const freeze = (proc: { freeze(): void; thaw(): void }): Acts => [
  [1000, () => proc.freeze()],
  [3000, () => proc.thaw()],
];

/** An engine and nginx (plain) in front of it, then the run. */
async function behindNginx(scope: Scope, signal: AbortSignal, settings: Record<string, unknown>, spec: Omit<RunSpec, 'engine' | 'via'> = {}, engineOf = single): Promise<Summary> {
  const engine = await engineOf(scope, settings);
  const proxy = await nginx(scope, engine.port);
  return runInProcess(scope, { ...spec, engine, via: tlsProxy(proxy.url) }, signal);
}

/** One request held in a PD queue from round 4 (after the scrapes saw it empty), alone (1 agent) or beside
 * the load of 4 agents, behind nginx; 6 s so the floor it makes is watched for seconds. */
function pdQueue(name: string, queue: string, faults: Record<string, unknown>[], settings: Record<string, unknown> = {}): Scenario[] {
  return (['alone', 'under-load'] as const).map((load) => ({
    name: `pd-${name}-${load}`,
    // The decode loop stopped holds a request in a PD queue too, but what stopped is the decode.
    family: faults.some((f) => f['kind'] === 'decode_stall') ? 'decode stalls' : 'PD queue pins',
    expected: ['engine'],
    fault: `one request held in the ${queue} (${faults.map((f) => String(f['kind'])).join(', ')}), ${load === 'alone' ? 'the only agent' : 'while 3 other agents flow'}`,
    run: (scope, signal) => behindNginx(scope, signal, { ...settings, faults }, { set: ['duration=6s', ...(load === 'alone' ? ['agents.count=1'] : [])] }, pd),
  }));
}

const pinned = { from_round: 4, times: 1 };

const PD_QUEUES: Scenario[] = [
  ...pdQueue('prefill-bootstrap', "prefill's bootstrap queue (decode never preallocates)", [{ kind: 'bootstrap_stall', ...pinned }]),
  ...pdQueue('prefill-inflight', "prefill's inflight queue (KV transfer never ends)", [{ kind: 'inflight_pin', ...pinned }], { kv_transfer_ms: 40 }),
  ...pdQueue('decode-prealloc', "decode's prealloc queue (the decode loop stopped, 2 slots)", [{ kind: 'decode_stall', ...pinned }], { max_running_requests: 2 }),
  ...pdQueue('decode-transfer', "decode's transfer queue (every KV transfer wedged)", [{ kind: 'kv_wedge', ...pinned }]),
  ...pdQueue('waiting', "decode's waiting queue (the decode loop stopped)", [{ kind: 'decode_stall', ...pinned }]),
  {
    name: 'pd-decode-paused-nginx',
    family: 'decode stalls',
    expected: ['engine'],
    fault: 'the decode loop stopped 2.5 s at round 5 and then going on, while 6 agents flow, behind nginx: a queue and late first tokens as under overload, work before and after',
    run: (scope, signal) => behindNginx(scope, signal, { faults: [{ kind: 'decode_stall', from_round: 5, times: 1, duration_s: 2.5 }] }, { set: ['duration=6s', 'agents.count=6'] }, pd),
  },
];

const ENGINE_FAULTS: Scenario[] = [
  {
    name: 'engine-frozen-haproxy',
    family: 'engine down/restart',
    expected: ['engine'],
    fault: 'the engine SIGSTOPped for 2 s behind HAProxy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await haproxy(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts: freeze(engine) }, signal);
    },
  },
  {
    name: 'engine-frozen-nginx-tls',
    family: 'engine down/restart',
    expected: ['engine'],
    fault: 'the engine SIGSTOPped for 2 s behind nginx terminating TLS',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port, { buffering: false, tls: true });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), caFile: proxy.caFile, acts: freeze(engine) }, signal);
    },
  },
  {
    name: 'engine-killed-nginx',
    family: 'engine down/restart',
    expected: ['engine'],
    fault: 'the engine SIGKILLed 1 s in, not restarted, behind nginx (which answers 502)',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts: [[1000, () => engine.kill()]] }, signal);
    },
  },
  {
    name: 'engine-restarted-haproxy',
    family: 'engine down/restart',
    expected: ['engine'],
    fault: 'the engine SIGKILLed 1 s in and started again on its port (about 2-4 s later), behind HAProxy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await haproxy(scope, engine.port);
      const restart = async (): Promise<void> => {
        await engine.kill();
        await single(scope, {}, ['--port', String(engine.port)]);
      };
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts: [[1000, restart]], set: ['duration=6s'] }, signal);
    },
  },
  {
    name: 'engine-slow-nginx',
    family: 'decode stalls',
    expected: ['engine_overloaded', 'engine'],
    fault: 'every decode step 900 ms (past the 800 ms stall deadline), behind nginx: tokens still come',
    run: (scope, signal) => behindNginx(scope, signal, { decode_step_ms: 900, output_tokens_min: 4, output_tokens_max: 6 }),
  },
  {
    name: 'engine-overloaded-haproxy',
    family: 'overload',
    expected: ['engine_overloaded'],
    fault: '2 running slots and slow prefills (1.8 s per 1k tokens) for 8 agents, behind HAProxy: completions go on, the rest queue',
    run: async (scope, signal) => {
      const engine = await single(scope, { max_running_requests: 2, prefill_ms_per_1k_tokens: 1800 });
      const proxy = await haproxy(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: ['agents.count=8', 'agents.think_time_ms=20'] }, signal);
    },
  },
  {
    name: 'engine-out-of-kv-pd',
    family: 'overload',
    // Both: the requests wait for KV, and the embedded engine parsing 800 KB bodies stops answering its /metrics
    // for seconds (a real engine's tokenizer does the same with prompts this size).
    expected: ['engine_overloaded', 'engine'],
    fault: "PD, 8 agents with 200k-token prompts, each holding its KV for the 0.8 s transfer: the prefill's 1M-token KV holds 5, the rest (and the canaries) wait for KV, behind nginx",
    run: (scope, signal) =>
      behindNginx(
        scope,
        signal,
        { prefill_ms_per_1k_tokens: 0.5, kv_transfer_ms: 800 },
        {
          set: ['agents.count=8', 'agents.rounds=20', 'conversation.system_prompt_tokens=200000', 'conversation.max_context_tokens=300000', 'watchdog.first_token_ms=1500', 'duration=6s'],
        },
        pd,
      ),
  },
  {
    name: 'engine-500-nginx',
    family: 'engine down/restart',
    expected: ['engine'],
    fault: "the engine answers its own 500 (SGLang's error body) to every agent request from round 3, behind nginx; canaries fine",
    run: (scope, signal) => behindNginx(scope, signal, { faults: [{ kind: 'http_error', status: 500, from_round: 3 }] }),
  },
];

const PROXY_FAULTS: Scenario[] = [
  {
    name: 'haproxy-frozen',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'HAProxy SIGSTOPped for 2 s, the engine healthy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await haproxy(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts: freeze(proxy) }, signal);
    },
  },
  {
    name: 'nginx-frozen-tls',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'nginx (TLS) SIGSTOPped for 2 s, the engine healthy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port, { buffering: false, tls: true });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), caFile: proxy.caFile, acts: freeze(proxy) }, signal);
    },
  },
  {
    name: 'haproxy-killed',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'HAProxy SIGKILLed 1 s in, the engine healthy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await haproxy(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts: [[1000, () => proxy.kill()]] }, signal);
    },
  },
  {
    name: 'nginx-killed',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'nginx SIGKILLed 1 s in, the engine healthy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts: [[1000, () => proxy.kill()]] }, signal);
    },
  },
  {
    name: 'nginx-502-upstream-down',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: "nginx's upstream points at a closed port: its own 502 at once, the engine healthy, scraped and canaried",
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, await freePort());
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url) }, signal);
    },
  },
  {
    name: 'nginx-502-no-canaries',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: 'the same 502 from nginx, the engine healthy and scraped, no canaries',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, await freePort());
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: ['monitor.canary_interval_s=0'] }, signal);
    },
  },
  {
    name: 'nginx-504-read-timeout',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: 'nginx proxy_read_timeout 2s in front of a 3 s prefill: the path cuts every request at 2 s (the watchdog waits longer)',
    run: async (scope, signal) => {
      const engine = await single(scope, { prefill_ms_per_1k_tokens: 10_000 });
      const proxy = await nginx(scope, engine.port, { buffering: false, readTimeoutS: 2 });
      const set = [
        'agents.count=3',
        'duration=5s',
        'conversation.first_user_tokens=80',
        'watchdog.headers_ms=4000',
        'watchdog.first_token_ms=5000',
        'watchdog.stall_ms=5000',
        'watchdog.total_ms=6000',
      ];
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: [...set, 'monitor.interval_ms=250', 'monitor.canary_interval_s=0.5', 'monitor.canary_timeout_ms=1000'] }, signal);
    },
  },
  {
    name: 'hop-idle-close-under-think',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: 'the hop drops idle connections after 1 s silently (half-open), agents think 1.5 s: every reused socket hangs',
    run: async (scope, signal) => {
      const engine = await single(scope);
      return runInProcess(scope, { engine, via: '{kind: hop, faults: [{kind: idle_close, after_s: 1, mode: silent}]}', set: ['agents.think_time_ms=1500', 'duration=6s'] }, signal);
    },
  },
  {
    name: 'nginx-buffering-tls',
    family: 'proxy buffering',
    expected: ['none'],
    fault: 'nginx terminating TLS with proxy_buffering on: every stream arrives whole, nothing fails (the buffering is its own finding)',
    run: async (scope, signal) => {
      const engine = await single(scope, { decode_step_ms: 8, prefill_ms_per_1k_tokens: 200 });
      const proxy = await nginx(scope, engine.port, { buffering: true, tls: true });
      const set = ['duration=2500ms', 'watchdog.headers_ms=5000', 'watchdog.first_token_ms=5000', 'watchdog.stall_ms=5000', 'watchdog.total_ms=10000'];
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), caFile: proxy.caFile, set }, signal);
    },
  },
  {
    name: 'hop-buffer-past-deadline',
    family: 'proxy buffering',
    expected: ['proxy'],
    fault: 'the hop buffers whole answers that take 1.5-2 s to decode: no first token within the 1 s deadline',
    run: async (scope, signal) => {
      const engine = await single(scope, { decode_step_ms: 100 });
      return runInProcess(scope, { engine, via: '{kind: hop, faults: [{kind: buffer}]}' }, signal);
    },
  },
  {
    name: 'nginx-413-body-limit',
    family: 'proxy timeouts and limits',
    expected: ['proxy'],
    fault: "nginx client_max_body_size 16k while the conversation grows past it: nginx's own 413",
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port, { buffering: false, clientMaxBodySize: '16k' });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), set: ['conversation.tool_result_tokens=1500'] }, signal);
    },
  },
  {
    name: 'hop-stall-reused',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: "the hop stops answering a connection's 3rd request on (the incident's stall), the engine healthy",
    run: async (scope, signal) => {
      const engine = await single(scope);
      return runInProcess(scope, { engine, via: '{kind: hop, faults: [{kind: stall, after_requests: 2}]}' }, signal);
    },
  },
  {
    name: 'hop-cut-mid-stream',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'the hop forwards 3 SSE events of every stream then goes silent, the engine healthy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      return runInProcess(scope, { engine, via: '{kind: hop, faults: [{kind: cut, after_chunks: 3}]}' }, signal);
    },
  },
  {
    name: 'connect-proxy-frozen',
    family: 'proxy stall',
    expected: ['proxy'],
    fault: 'an HTTP CONNECT proxy SIGSTOPped for 2 s, the engine healthy (target.bypass set: a CONNECT path has no default direct leg)',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await startConnectProxy(scope);
      return runInProcess(scope, { engine, via: `{kind: connect, url: "${proxy.url}"}`, set: [`target.bypass=${engine.url}`], acts: freeze(proxy.proc) }, signal);
    },
  },
];

/** Starvation makes hangs only when it catches the client mid-work: a run that did not hang (the fault did not
 * happen) is tried again, up to this many times; the last run counts whatever it says. */
const STARVED_ATTEMPTS = 3;

async function starvedRun(scope: Scope, signal: AbortSignal): Promise<Summary> {
  const taskset = tool('taskset');
  const renice = tool('renice');
  const engine = await single(scope, { decode_step_ms: 2, decode_step_ms_per_running: 0, prefill_ms_per_1k_tokens: 0, output_tokens_min: 8, output_tokens_max: 8 });
  const proxy = await haproxy(scope, engine.port);
  let summary: Summary | null = null;
  for (let attempt = 0; attempt < STARVED_ATTEMPTS && (summary === null || summary.totals.hangs === 0); attempt += 1) {
    summary = await runAsChild(scope, { engine, via: tlsProxy(proxy.url) }, signal, async (pid) => {
      await sleep(1000);
      starve(taskset, renice, pid, 0);
      const loops = [busyLoop(scope.context(), taskset, 0), busyLoop(scope.context(), taskset, 0)];
      await sleep(3000);
      await Promise.all(loops.map((l) => l.kill()));
      release(taskset, renice, pid);
    });
  }
  return summary!;
}

const CLIENT_AND_NETWORK: Scenario[] = [
  {
    name: 'client-starved-cpu',
    family: 'client starvation',
    expected: ['host_starved'],
    fault: 'the run (its own process) pinned to one core at nice 19 beside two busy loops for 3 s, behind HAProxy',
    run: starvedRun,
  },
  {
    name: 'blackhole-proxy-engine',
    family: 'network',
    expected: ['proxy', 'network'],
    fault: "the link between nginx and the engine (their own network namespaces) down for 2.5 s: nginx's packets dropped; client→engine and client→nginx fine",
    run: (scope, signal) => netRun(scope, signal, 'proxy-engine'),
  },
  {
    name: 'blackhole-client-proxy',
    family: 'network',
    expected: ['network', 'proxy'],
    fault: "the link between the client and nginx down for 2.5 s: the client's packets to the proxy dropped; client→engine fine",
    run: (scope, signal) => netRun(scope, signal, 'client-proxy'),
  },
];

async function netRun(scope: Scope, signal: AbortSignal, path: 'proxy-engine' | 'client-proxy'): Promise<Summary> {
  const net = makeNet(scope);
  const engine = await spawnEngineInNs(scope, net.engineNs, net.engineForClient, ENGINE);
  const proxy = await startNginxInNs(scope, tool('nginx'), net.proxyNs, net.proxyForClient, `${net.engineForProxy}:${engine.port}`);
  const acts: Acts = [
    [1000, () => net.cut(path)],
    [3500, () => net.restore(path)],
  ];
  return runInProcess(scope, { engine, via: tlsProxy(proxy.url), acts, set: ['duration=5s'] }, signal);
}

const HEALTHY: Scenario[] = [
  {
    name: 'healthy-single-direct',
    family: 'healthy-but-odd servers',
    expected: ['none'],
    fault: 'nothing: the single engine, straight',
    run: async (scope, signal) => runInProcess(scope, { engine: await single(scope) }, signal),
  },
  {
    name: 'healthy-nginx-tls',
    family: 'healthy-but-odd servers',
    expected: ['none'],
    fault: 'nothing: the single engine behind nginx terminating TLS, unbuffered',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await nginx(scope, engine.port, { buffering: false, tls: true });
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url), caFile: proxy.caFile }, signal);
    },
  },
  {
    name: 'healthy-pd-haproxy',
    family: 'healthy-but-odd servers',
    expected: ['none'],
    fault: 'nothing: the PD deployment behind HAProxy',
    run: async (scope, signal) => {
      const engine = await pd(scope);
      const proxy = await haproxy(scope, engine.port);
      return runInProcess(scope, { engine, via: tlsProxy(proxy.url) }, signal);
    },
  },
  {
    name: 'healthy-connect-proxy',
    family: 'healthy-but-odd servers',
    expected: ['none'],
    fault: 'nothing: the single engine through a CONNECT proxy',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await startConnectProxy(scope);
      return runInProcess(scope, { engine, via: `{kind: connect, url: "${proxy.url}"}` }, signal);
    },
  },
];

export const SCENARIOS: readonly Scenario[] = [...PD_QUEUES, ...ENGINE_FAULTS, ...PROXY_FAULTS, ...PROXY_LIMITS, ...SIZE_DEPENDENT, ...CLIENT_AND_NETWORK, ...CLASSES, ...HEALTHY, ...FOREIGN_ENGINE];

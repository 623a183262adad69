// Fault-matrix scenarios of issue 41's classes of evidence that the other lists lacked: an engine slow for
// everyone (the direct canaries slowed against their own past), a proxy's fault while the client's own loop
// stalls for a second (its lateness a discount, not a veto), a hop stalling a share of the requests with
// canaries too sparse to compare (the engine does not hold the hung requests), and a proxy that stops answering a connection once
// an answer on it went out, agents not thinking (a keep-alive closer: the story is the close, not an idle
// timeout). The expected verdict is what the fault is, whatever the diagnosis says.
import { findExecutable, spawnEngine, startCloser, startHaproxy, type EngineProc } from '../test/helpers/procs.js';
import { stalledClient, throttle } from '../test/helpers/real-parts.js';
import type { Scope } from './diagnosis-parts.js';
import { runInProcess } from './diagnosis-run.js';
import type { Scenario } from './diagnosis-scenarios.js';

/** The embedded single engine, fast: short answers, quick steps. */
const single = (scope: Scope, settings: Record<string, unknown> = {}): Promise<EngineProc> =>
  spawnEngine(scope.context(), { topology: 'single', decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0, ...settings });

export const CLASSES: readonly Scenario[] = [
  {
    name: 'engine-throttled-haproxy',
    family: 'overload',
    needs: () => (findExecutable('haproxy') === null ? 'haproxy is not installed (apt-get install haproxy)' : null),
    expected: ['engine', 'engine_overloaded'],
    fault: 'the engine given a tenth of the time for 3 s (SIGSTOP 1 s, SIGCONT 100 ms) behind a healthy HAProxy: slow for every request, the direct canaries too',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const proxy = await startHaproxy(scope.context(), findExecutable('haproxy')!, engine.port);
      // Canaries every 250 ms, four a leg out at once, 2 s to answer: a slowed leg answers, slowly.
      const set = ['duration=6s', 'monitor.canary_timeout_ms=2000', 'monitor.canary_concurrency=4'];
      return runInProcess(scope, { engine, via: `{kind: tls-proxy, url: "${proxy.url}"}`, caFile: proxy.caFile, set, acts: throttle(engine, 1000, 3000) }, signal);
    },
  },
  {
    name: 'hop-buffer-client-late',
    family: 'proxy buffering',
    expected: ['proxy'],
    fault: "the hop buffers whole answers of 1.2-2 s past the 1 s first-token deadline while the client's own loop is blocked for 1.2 s in the middle",
    run: async (scope, signal) => {
      const engine = await single(scope, { decode_step_ms: 100 });
      const client = stalledClient();
      return runInProcess(scope, { engine, via: '{kind: hop, faults: [{kind: buffer}]}', set: ['duration=6s'], acts: [[1500, () => client.stall(1200)]], clientSample: client.sample }, signal);
    },
  },
  {
    name: 'hop-stall-share-sparse-canaries',
    family: 'proxy stall',
    expected: ['proxy'],
    fault:
      "the built-in hop stalls a seeded quarter of the requests past each connection's first while the PD engine's queues rotate and work flows; one canary a leg in the run (nothing to compare the legs on)",
    run: async (scope, signal) => {
      const engine = await spawnEngine(scope.context(), { decode_step_ms: 5, output_tokens_min: 12, output_tokens_max: 20, stats_interval_steps: 0 });
      const set = ['duration=8s', 'agents.count=6', 'monitor.canary_interval_s=30'];
      return runInProcess(scope, { engine, via: '{kind: hop, faults: [{kind: stall, after_requests: 1, ratio: 0.25, seed: 3}]}', set }, signal);
    },
  },
  {
    name: 'closer-after-answer',
    family: 'healthy-but-odd servers',
    expected: ['proxy'],
    fault: 'a reverse proxy (a small Node server, its own process) that never answers on a connection again once an answer on it went out, still advertising keep-alive; agents not thinking',
    run: async (scope, signal) => {
      const engine = await single(scope);
      const closer = await startCloser(scope.context(), engine.url);
      return runInProcess(scope, { engine, via: `{kind: tls-proxy, url: "${closer.url}"}`, set: ['agents.think_time_ms=0'] }, signal);
    },
  },
];

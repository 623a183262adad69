// The real-parts run shared by the diagnosis e2e tests and the fault-matrix bench: four agents for a few
// seconds with tight deadlines against real parts (a stuck request is a hang within a second), scrapes every
// 200 ms and canaries on both legs, run in this process with the client's own health pinned quiet (the
// verdicts are about the engine and the path, not a loaded test machine); faults acted at set times after the
// run's first completed request.
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseWorkload, type Workload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { readSummary } from '../../src/results/index.js';
import { formatSummary } from '../../src/report/index.js';
import type { Summary } from '../../src/analysis/index.js';
import type { ClientSampleEvent, RunEvent } from '../../src/types/index.js';
import type { MonitorTarget } from './procs.js';
import { quietClient } from './quiet-client.js';

/** What to do to the parts, in ms after the run's first completed request. */
export type Acts = readonly (readonly [number, () => void | Promise<void>])[];

export interface RealPartsSpec {
  /** The engine as the client reaches it (and the canaries' direct leg), and what to scrape. */
  engine: { url: string; targets: readonly MonitorTarget[] };
  /** `target.via` as YAML flow text (`{kind: tls-proxy, url: "…"}`); absent or null: straight to the engine. */
  via?: string | null;
  caFile?: string | null;
  /** Scrape the engine's targets. @default true */
  scraped?: boolean;
  /** @default '4s' */
  duration?: string;
  /** The watchdog as YAML flow text. @default tight: headers 800 ms, first token 1 s, stall 800 ms. */
  watchdog?: string;
  /** Seconds between canaries (0: none) and their timeout. @default 0.25 s, 800 ms */
  canary?: { interval_s: number; timeout_ms: number };
  /** `--set` overrides. */
  set?: readonly string[];
}

const TIGHT_WATCHDOG = '{connect_ms: 1000, headers_ms: 800, first_token_ms: 1000, stall_ms: 800, total_ms: 4000}';

/** The real-parts workload for `spec`, named `name`. */
export function realPartsWorkload(name: string, spec: RealPartsSpec): Workload {
  const targets = spec.scraped === false ? '' : spec.engine.targets.map((x) => `{name: ${x.name}, url: "${x.url}"}`).join(', ');
  const via = spec.via === undefined || spec.via === null ? '' : `, via: ${spec.via}`;
  const tls = spec.caFile === undefined || spec.caFile === null ? '' : `, tls: {ca: "${spec.caFile}"}`;
  const canary = spec.canary ?? { interval_s: 0.25, timeout_ms: 800 };
  return parseWorkload(
    `name: ${name}
target: {url: "${spec.engine.url}"${via}${tls}}
agents: {count: 4, rounds: 1000, think_time_ms: 50}
duration: ${spec.duration ?? '4s'}
conversation: {max_tokens: 24, system_prompt_tokens: 200, first_user_tokens: 50, tool_result_tokens: 50, tool_result_growth_tokens: 10}
watchdog: ${spec.watchdog ?? TIGHT_WATCHDOG}
monitor: {interval_ms: 200, timeout_ms: 400, canary_interval_s: ${canary.interval_s}, canary_timeout_ms: ${canary.timeout_ms}, targets: [${targets}]}
thresholds: {hangs: null}
`,
    `${name}.yaml`,
    { set: [...(spec.set ?? [])] },
  );
}

export interface RunOptions {
  acts?: Acts;
  signal?: AbortSignal;
  preflight?: boolean;
  /** What the client's sampler reports. @default quietClient: its health pinned quiet */
  clientSample?: (measured: ClientSampleEvent) => ClientSampleEvent;
}

/** Runs `workload` into `out`, acting `acts` after its first completed request; resolves with its summary
 * once every act has settled. No preflight unless asked: a path broken from the start is the scenario. */
export async function runWithActs(workload: Workload, out: string, options: RunOptions = {}): Promise<Summary> {
  const timers: NodeJS.Timeout[] = [];
  const pending: Promise<unknown>[] = [];
  let started = false;
  try {
    await executeRun({
      workload,
      out,
      preflight: options.preflight ?? false,
      clientSample: options.clientSample ?? quietClient,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      onEvent: (e: RunEvent) => {
        if (started || e.kind !== 'request') return;
        started = true;
        for (const [afterMs, act] of options.acts ?? []) timers.push(setTimeout(() => pending.push(Promise.resolve().then(act)), afterMs));
      },
    });
  } finally {
    timers.forEach((timer) => clearTimeout(timer));
    await Promise.allSettled(pending);
  }
  return readSummary(out);
}

/**
 * A client that stalls on cue: `stall(ms)` busy-waits in this process (the run's own event loop blocked, as a
 * client's long synchronous work blocks it), and `sample` reports the two sampler windows after each stall as
 * measured, every other window quiet (quietClient): the run's lateness is the stall's, not a loaded test
 * machine's. The first window reported after a stall holds it (nothing runs during a busy wait, so the window
 * before it was reported before it began); the one after it too, where a timer that fired late after the stall
 * may have recorded it.
 */
export function stalledClient(): { stall: (ms: number) => void; sample: (measured: ClientSampleEvent) => ClientSampleEvent; readonly stalls: number } {
  let pending = 0;
  let stalls = 0;
  return {
    stall: (ms) => {
      const end = performance.now() + ms;
      while (performance.now() < end) {
        // busy: the client's loop is held, its timers and sockets wait
      }
      pending = 2;
      stalls += 1;
    },
    sample: (measured) => {
      if (pending === 0) return quietClient(measured);
      pending -= 1;
      return measured;
    },
    get stalls() {
      return stalls;
    },
  };
}

/** ROUNDLOAD_SHOW_DIAGNOSIS=1: the terminal's diagnosis lines of a run, as a person would read them. */
export function showDiagnosis(t: TestContext, summary: Summary, dir: string): void {
  if (process.env.ROUNDLOAD_SHOW_DIAGNOSIS !== '1') return;
  t.diagnostic(
    formatSummary(summary, dir)
      .split('\n')
      .filter((l) => /^(diagnosis|streams|timeout|hangs|errors|requests|client) |^ {11}/.test(l))
      .join('\n'),
  );
}

/** The diagnosis of a run, for an assertion's message. */
export function why(s: Summary): string {
  return JSON.stringify(
    {
      verdict: s.diagnosis.verdict,
      confidence: s.diagnosis.confidence,
      path_timeout: s.diagnosis.path_timeout,
      episodes: s.diagnosis.episodes?.map((e) => ({
        kind: e.kind,
        at: [e.start_ms, e.end_ms],
        verdict: e.verdict,
        confidence: e.confidence,
        scores: e.scores,
        for: e.evidence_for,
        against: e.evidence_against,
        facts: e.facts,
      })),
    },
    null,
    1,
  );
}

/** The engine given a tenth of the time (SIGSTOP 1 s, SIGCONT 100 ms), from `fromMs` for `forMs`: an engine
 * whose process keeps pausing (a host swapping, a CPU quota far below its need) — slow for every request,
 * the proxy's or not. */
export function throttle(engine: { freeze(): void; thaw(): void }, fromMs: number, forMs: number): Acts {
  return [
    [
      fromMs,
      async () => {
        const end = performance.now() + forMs;
        try {
          while (performance.now() < end) {
            engine.freeze();
            await sleep(1000);
            engine.thaw();
            await sleep(100);
          }
        } finally {
          engine.thaw();
        }
      },
    ],
  ];
}

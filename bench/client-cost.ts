// Client cost and timing fidelity: SSE events per CPU-second of roundload beside a bare loop (plain undici
// request + SSE parse, nothing else) against the same engine process, in two regimes: batched (zero model
// delay, many events per TCP read) and paced (one token per write, 50 tokens/s per stream, like a real engine).
import { Client } from 'undici';
import { createParser } from 'eventsource-parser';
import { ChatStreamParser, MessageAssembler } from '../src/stream/index.js';
import { parseWorkload } from '../src/config/index.js';
import { executeRun } from '../src/run/index.js';
import type { RequestRecord, RunEvent } from '../src/types/index.js';
import { performance } from 'node:perf_hooks';
import { percentile, printTable, startEngineProcess, threadCpuNs } from './lib.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How much load one level is: agents × rounds requests of `maxTokens` tokens each. */
interface Level {
  agents: number;
  rounds: number;
  maxTokens: number;
  /** `agents.workers` (threads the agents are spread over). @default 1 */
  workers?: number;
}

interface Regime {
  name: string;
  engine: Record<string, unknown>;
  level: (agents: number) => Level;
}

/** Alternated rounds per level (`--repeat N`): one run's ratio moves ±30% on a loaded machine. */
export const DEFAULT_REPEAT = 5;

/** The engine always has more to say than max_tokens allows: every answer is exactly max_tokens long. */
const COMMON_ENGINE = { prefill_ms_per_1k_tokens: 0, kv_transfer_ms: 0, output_tokens_min: 2000, output_tokens_max: 2000, tool_call_ratio: 0, max_running_requests: 4096, reasoning_tokens_max: 0 };

export const REGIMES: Regime[] = [
  {
    name: 'batched (zero model delay)',
    engine: { ...COMMON_ENGINE, decode_step_ms: 0, decode_step_ms_per_running: 0 },
    // About 100-150k events a level, conversations no longer than 8 rounds.
    level: (agents) => {
      const rounds = Math.max(1, Math.min(8, Math.ceil(128 / agents)));
      return { agents, rounds, maxTokens: Math.max(100, Math.min(1000, Math.round(120_000 / (agents * rounds)))) };
    },
  },
  {
    name: 'paced (50 tokens/s per stream)',
    engine: { ...COMMON_ENGINE, decode_step_ms: 20, decode_step_ms_per_running: 0 },
    // 100 tokens = 2 s a request at 50 tokens/s.
    level: (agents) => ({ agents, rounds: agents <= 16 ? 4 : agents <= 96 ? 2 : 1, maxTokens: agents >= 1024 ? 150 : 100 }),
  },
];

function workloadYaml(url: string, agents: number, rounds: number, maxTokens = 256, workers = 1): string {
  return [
    'name: bench',
    `target: {url: "${url}"}`,
    `agents: {count: ${agents}, rounds: ${rounds}, think_time_ms: 0, workers: ${workers}}`,
    'monitor: {enabled: false, canary_interval_s: 0}',
    `conversation: {system_prompt_tokens: 200, first_user_tokens: 50, user_turn_tokens: 20, max_tokens: ${maxTokens}}`,
    'watchdog: {headers_ms: 120000, first_token_ms: 120000, stall_ms: 60000, total_ms: 300000}',
    'window_s: 1',
  ].join('\n');
}

/** What one client run measured over its span (first request sent to last request ended). */
export interface ClientFigures {
  events: number;
  /** CPU of the whole process (every thread: the results writer's, V8's background GC). */
  cpuS: number;
  /** CPU of the main thread alone (Linux); null elsewhere. */
  mainCpuS: number | null;
  wallS: number;
}

/** Called at the measured span's ends (the profile bench profiles exactly that span). */
export interface SpanHooks {
  start?: () => void;
  end?: () => void;
}

export interface RoundloadFigures extends ClientFigures {
  rssPeakMb: number;
  records: RequestRecord[];
  loopDelayP99Ms: number;
  saturatedWindows: number;
}

/**
 * One roundload run in this process against `url`. CPU is counted from the first request's send to the
 * last request's end, so set-up and the final files (fixed costs) do not blur the per-event figure.
 */
export async function roundloadRun(url: string, level: Level, extra = '', span: SpanHooks = {}): Promise<RoundloadFigures> {
  const workload = parseWorkload(`${workloadYaml(url, level.agents, level.rounds, level.maxTokens, level.workers)}\n${extra}`, 'bench.yaml');
  const out = mkdtempSync(join(tmpdir(), 'roundload-bench-run-'));
  const records: RequestRecord[] = [];
  const planned = level.agents * level.rounds;
  let cpu0: NodeJS.CpuUsage | null = null;
  let cpu1: NodeJS.CpuUsage | null = null;
  let main0: number | null = null;
  let main1: number | null = null;
  let t0 = 0;
  let t1 = 0;
  // RSS from the run's own client samples (one a second): a sampler of the bench's would be charged to roundload.
  let rssPeak = process.memoryUsage.rss();
  const onEvent = (e: RunEvent): void => {
    if (e.kind === 'client_sample') rssPeak = Math.max(rssPeak, e.rss_bytes);
    else if (e.kind === 'request_start' && cpu0 === null) {
      span.start?.();
      cpu0 = process.cpuUsage();
      main0 = threadCpuNs();
      t0 = performance.now();
    } else if (e.kind === 'request') {
      records.push(e.record);
      // Only at the last request: process.cpuUsage() is a syscall, and charging one per request to
      // roundload would be the bench's cost, not roundload's.
      if (records.length === planned) {
        cpu1 = process.cpuUsage();
        main1 = threadCpuNs();
        t1 = performance.now();
        span.end?.();
      }
    }
  };
  try {
    const result = await executeRun({ workload, out, onEvent });
    if (cpu0 === null || cpu1 === null) throw new Error(`the bench run did not complete its ${planned} requests (${records.length} recorded, status ${result.status})`);
    const events = records.reduce((s, r) => s + r.chunks, 0);
    return {
      events,
      cpuS: cpuSeconds(cpu0, cpu1),
      mainCpuS: main0 === null || main1 === null ? null : (main1 - main0) / 1e9,
      wallS: (t1 - t0) / 1000,
      rssPeakMb: rssPeak / 1048576,
      records,
      loopDelayP99Ms: result.summary.client.loop_delay_p99_ms_max,
      saturatedWindows: result.summary.client.saturated_windows,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function cpuSeconds(a: NodeJS.CpuUsage, b: NodeJS.CpuUsage): number {
  return (b.user - a.user + b.system - a.system) / 1e6;
}

/** Collects garbage left by the previous run (when node runs with --expose-gc, as `npm run bench` does), so
 * no run pays for another's heap. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * The bare loop: `agents` workers, each a keep-alive Client, POST + SSE parse + JSON.parse, nothing else. CPU
 * is counted over the same span as roundload's: from the first request's send to the last request's end (the
 * clients are made before, closed after).
 */
export async function bareRun(url: string, agents: number, requests: number, body: string, parse: 'plain' | 'roundload' = 'plain', span: SpanHooks = {}): Promise<ClientFigures> {
  const perAgent = Math.max(1, Math.ceil(requests / agents));
  const clients = Array.from({ length: agents }, () => new Client(url, { pipelining: 1, keepAliveTimeout: 60_000 }));
  let events = 0;
  span.start?.();
  const cpu0 = process.cpuUsage();
  const main0 = threadCpuNs();
  const t0 = performance.now();
  try {
    await Promise.all(
      clients.map(async (client) => {
        for (let i = 0; i < perAgent; i += 1) {
          const res = await client.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
          // `roundload`: the same loop with roundload's stream parser and message assembler instead, to
          // split the parsing cost from the rest of roundload's per-request work.
          let feed: (chunk: Buffer) => void;
          if (parse === 'plain') {
            const decoder = new TextDecoder();
            const parser = createParser({
              onEvent(ev) {
                if (ev.data !== '[DONE]') JSON.parse(ev.data);
                events += 1;
              },
            });
            feed = (chunk) => parser.feed(decoder.decode(chunk, { stream: true }));
          } else {
            const assembler = new MessageAssembler();
            const parser = new ChatStreamParser((e) => assembler.apply(e));
            feed = (chunk) => parser.feed(chunk);
            res.body.once('end', () => {
              parser.end();
              events += parser.dataEvents;
            });
          }
          await new Promise<void>((resolve, reject) => {
            res.body.on('data', feed);
            res.body.on('end', () => resolve());
            res.body.on('error', reject);
          });
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    const main1 = threadCpuNs();
    span.end?.();
    return { events, cpuS: (cpu.user + cpu.system) / 1e6, mainCpuS: main0 === null || main1 === null ? null : (main1 - main0) / 1e9, wallS: (performance.now() - t0) / 1000 };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export function firstBody(maxTokens: number): string {
  const w = parseWorkload(workloadYaml('http://127.0.0.1:1', 1, 1, maxTokens), 'bench.yaml');
  return JSON.stringify({
    model: w.target.model,
    stream: true,
    max_tokens: w.conversation.max_tokens,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'x '.repeat(400) },
      { role: 'user', content: 'y '.repeat(100) },
    ],
  });
}

/** Median and spread of a sample. */
function spread(values: number[]): { median: number; min: number; max: number } {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const s = [...values].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One level's repeated, alternated measurement. */
interface LevelFigures {
  rlRates: number[];
  bareRates: number[];
  oursRates: number[];
  /** bare ev/cpu-s ÷ roundload ev/cpu-s of each round (roundload and bare run side by side in it). */
  ratios: number[];
  rlWallRates: number[];
  bareWallRates: number[];
  /** Share of each side's CPU spent on the main thread (the rest: other threads). */
  rlMainShares: number[];
  bareMainShares: number[];
  events: number;
  loopP99Ms: number[];
  saturated: number;
  rssPeakMb: number;
  ttftDeltas: number[];
}

/**
 * `repeat` rounds of the three clients at one level, their order alternating (roundload first, then last), so
 * the machine's drift and each run's garbage do not favour one side. Each run starts from a collected heap.
 */
async function measureLevel(url: string, level: Level, repeat: number): Promise<LevelFigures> {
  const requests = level.agents * level.rounds;
  const f: LevelFigures = {
    rlRates: [],
    bareRates: [],
    oursRates: [],
    ratios: [],
    rlWallRates: [],
    bareWallRates: [],
    rlMainShares: [],
    bareMainShares: [],
    events: 0,
    loopP99Ms: [],
    saturated: 0,
    rssPeakMb: 0,
    ttftDeltas: [],
  };
  for (let i = 0; i < repeat; i += 1) {
    const runRoundload = async (): Promise<RoundloadFigures> => (collectGarbage(), roundloadRun(url, level));
    const runBare = async (parse: 'plain' | 'roundload') => (collectGarbage(), bareRun(url, level.agents, requests, firstBody(level.maxTokens), parse));
    let rl: RoundloadFigures;
    let bare: ClientFigures;
    let ours: ClientFigures;
    if (i % 2 === 0) {
      rl = await runRoundload();
      bare = await runBare('plain');
      ours = await runBare('roundload');
    } else {
      ours = await runBare('roundload');
      bare = await runBare('plain');
      rl = await runRoundload();
    }
    const rlRate = rl.events / rl.cpuS;
    const bareRate = bare.events / bare.cpuS;
    f.rlRates.push(rlRate);
    f.bareRates.push(bareRate);
    f.oursRates.push(ours.events / ours.cpuS);
    f.ratios.push(bareRate / rlRate);
    f.rlWallRates.push(rl.events / rl.wallS);
    f.bareWallRates.push(bare.events / bare.wallS);
    if (rl.mainCpuS !== null) f.rlMainShares.push(rl.mainCpuS / rl.cpuS);
    if (bare.mainCpuS !== null) f.bareMainShares.push(bare.mainCpuS / bare.cpuS);
    f.events = rl.events;
    f.loopP99Ms.push(rl.loopDelayP99Ms);
    f.saturated += rl.saturatedWindows;
    f.rssPeakMb = Math.max(f.rssPeakMb, rl.rssPeakMb);
    for (const r of rl.records) if (r.ttft_ms !== null && r.server_ttft_ms !== null) f.ttftDeltas.push(r.ttft_ms - r.server_ttft_ms);
  }
  return f;
}

const x2 = (v: number): string => v.toFixed(2);

/**
 * `npm run bench -- client [agents…] [--repeat N]`: at each level, N alternated rounds of roundload, the bare
 * loop and the bare loop with our parser; prints the medians and the overhead's spread over the rounds.
 */
export async function clientCostBench(levels: number[], repeat = DEFAULT_REPEAT): Promise<void> {
  for (const regime of REGIMES) {
    const engine = await startEngineProcess(regime.engine);
    const rows: (string | number)[][] = [];
    const fidelity: (string | number)[][] = [];
    const beyond: (string | number)[][] = [];
    try {
      // Warm the JIT and the engine's caches once, so the first level is not charged for it.
      await roundloadRun(engine.url, { agents: 4, rounds: 2, maxTokens: 50 });
      await bareRun(engine.url, 4, 8, firstBody(50));
      await bareRun(engine.url, 4, 8, firstBody(50), 'roundload');
      for (const agents of levels) {
        const level = regime.level(agents);
        const f = await measureLevel(engine.url, level, repeat);
        const ratio = spread(f.ratios);
        rows.push([
          String(agents),
          level.agents * level.rounds,
          level.maxTokens,
          f.events,
          median(f.rlRates),
          median(f.rlWallRates),
          median(f.bareRates),
          median(f.bareWallRates),
          median(f.oursRates),
          median(f.ratios),
          `${x2(ratio.min)}–${x2(ratio.max)}`,
          repeat,
          f.rlMainShares.length === 0 ? '-' : `${Math.round(100 * median(f.rlMainShares))} / ${Math.round(100 * median(f.bareMainShares))}`,
          Math.max(...f.loopP99Ms),
          f.saturated,
          f.rssPeakMb,
        ]);
        if (agents === 96 || agents === 1024) fidelity.push([String(agents), f.ttftDeltas.length, percentile(f.ttftDeltas, 50), percentile(f.ttftDeltas, 99), Math.max(...f.loopP99Ms), f.saturated]);
      }
      if (regime.name.startsWith('paced') && levels.includes(1024)) beyond.push(...(await beyondOneCore(engine.url, regime.level(1024))));
    } finally {
      await engine.stop();
    }
    printTable(
      `client cost, ${regime.name}: SSE events per CPU-second of the client process (engine in its own process); medians of ${repeat} alternated rounds`,
      [
        'agents',
        'requests',
        'tokens/req',
        'events',
        'roundload ev/cpu-s',
        'roundload ev/s',
        'bare ev/cpu-s',
        'bare ev/s',
        'bare+our parser ev/cpu-s',
        'overhead ×',
        'overhead min–max',
        'rounds',
        'main thread % (ours / bare)',
        'loop p99 ms',
        'saturated win',
        'rss peak MB',
      ],
      rows,
    );
    if (beyond.length > 0)
      printTable(
        'beyond one core, paced, 1024 agents: the same load on 1 and 2 agent threads (offered about 51k events/s)',
        ['threads', 'events/s', 'cpu-s/s', 'ttft − engine p50 ms', 'p99 ms', 'loop delay p99 ms', 'saturated win'],
        beyond,
      );
    if (fidelity.length > 0)
      printTable(`timing fidelity, ${regime.name}: client TTFT − engine-stamped TTFT (all rounds)`, ['agents', 'requests', 'p50 ms', 'p99 ms', 'loop delay p99 ms', 'saturated win'], fidelity);
  }
}

/** The 1024-agent paced load on one thread and on two, to see what spreading the agents buys. */
async function beyondOneCore(url: string, level: Level): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  for (const workers of [1, 2]) {
    const rl = await roundloadRun(url, { ...level, workers });
    const deltas = rl.records.filter((r) => r.ttft_ms !== null && r.server_ttft_ms !== null).map((r) => r.ttft_ms! - r.server_ttft_ms!);
    rows.push([String(workers), rl.events / rl.wallS, rl.cpuS / rl.wallS, percentile(deltas, 50), percentile(deltas, 99), rl.loopDelayP99Ms, rl.saturatedWindows]);
  }
  return rows;
}

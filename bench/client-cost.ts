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
import { measure, percentile, printTable, startEngineProcess } from './lib.js';
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

export interface RoundloadFigures {
  events: number;
  cpuS: number;
  wallS: number;
  rssPeakMb: number;
  records: RequestRecord[];
  loopDelayP99Ms: number;
  saturatedWindows: number;
}

/**
 * One roundload run in this process against `url`. CPU is counted from the first request's send to the
 * last request's end, so set-up and the final files (fixed costs) do not blur the per-event figure.
 */
export async function roundloadRun(url: string, level: Level, extra = ''): Promise<RoundloadFigures> {
  const workload = parseWorkload(`${workloadYaml(url, level.agents, level.rounds, level.maxTokens, level.workers)}\n${extra}`, 'bench.yaml');
  const out = mkdtempSync(join(tmpdir(), 'roundload-bench-run-'));
  const records: RequestRecord[] = [];
  const planned = level.agents * level.rounds;
  let cpu0: NodeJS.CpuUsage | null = null;
  let cpu1: NodeJS.CpuUsage | null = null;
  let t0 = 0;
  let t1 = 0;
  const onEvent = (e: RunEvent): void => {
    if (e.kind === 'request_start' && cpu0 === null) {
      cpu0 = process.cpuUsage();
      t0 = performance.now();
    } else if (e.kind === 'request') {
      records.push(e.record);
      // Only at the last request: process.cpuUsage() is a syscall, and charging one per request to
      // roundload would be the bench's cost, not roundload's.
      if (records.length === planned) {
        cpu1 = process.cpuUsage();
        t1 = performance.now();
      }
    }
  };
  try {
    const m = await measure(() => executeRun({ workload, out, onEvent }));
    const events = records.reduce((s, r) => s + r.chunks, 0);
    const cpu = cpu0 !== null && cpu1 !== null ? cpuSeconds(cpu0, cpu1) : m.cpuS;
    return {
      events,
      cpuS: cpu,
      wallS: cpu1 === null ? m.wallS : (t1 - t0) / 1000,
      rssPeakMb: m.rssPeakMb,
      records,
      loopDelayP99Ms: m.value.summary.client.loop_delay_p99_ms_max,
      saturatedWindows: m.value.summary.client.saturated_windows,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function cpuSeconds(a: NodeJS.CpuUsage, b: NodeJS.CpuUsage): number {
  return (b.user - a.user + b.system - a.system) / 1e6;
}

/** The bare loop: `agents` workers, each a keep-alive Client, POST + SSE parse + JSON.parse, nothing else. */
export async function bareRun(url: string, agents: number, requests: number, body: string, parse: 'plain' | 'roundload' = 'plain'): Promise<{ events: number; cpuS: number; wallS: number }> {
  const perAgent = Math.max(1, Math.ceil(requests / agents));
  const m = await measure(async () => {
    let events = 0;
    await Promise.all(
      Array.from({ length: agents }, async () => {
        const client = new Client(url, { pipelining: 1, keepAliveTimeout: 60_000 });
        try {
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
        } finally {
          await client.close();
        }
      }),
    );
    return events;
  });
  return { events: m.value, cpuS: m.cpuS, wallS: m.wallS };
}

function firstBody(maxTokens: number): string {
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

export async function clientCostBench(levels: number[]): Promise<void> {
  for (const regime of REGIMES) {
    const engine = await startEngineProcess(regime.engine);
    const rows: (string | number)[][] = [];
    const fidelity: (string | number)[][] = [];
    const beyond: (string | number)[][] = [];
    try {
      // Warm the JIT and the engine's caches once, so the first level is not charged for it.
      await roundloadRun(engine.url, { agents: 4, rounds: 2, maxTokens: 50 });
      await bareRun(engine.url, 4, 8, firstBody(50));
      for (const agents of levels) {
        const level = regime.level(agents);
        const requests = level.agents * level.rounds;
        const rl = await roundloadRun(engine.url, level);
        const bare = await bareRun(engine.url, agents, requests, firstBody(level.maxTokens));
        const bareOurs = await bareRun(engine.url, agents, requests, firstBody(level.maxTokens), 'roundload');
        const rlRate = rl.events / rl.cpuS;
        const bareRate = bare.events / bare.cpuS;
        const oursRate = bareOurs.events / bareOurs.cpuS;
        rows.push([
          String(agents),
          requests,
          level.maxTokens,
          rl.events,
          rlRate,
          rl.events / rl.wallS,
          bareRate,
          bare.events / bare.wallS,
          oursRate,
          bareRate / rlRate,
          rl.loopDelayP99Ms,
          rl.saturatedWindows,
          rl.rssPeakMb,
        ]);
        if (agents === 96 || agents === 1024) {
          const deltas = rl.records.filter((r) => r.ttft_ms !== null && r.server_ttft_ms !== null).map((r) => r.ttft_ms! - r.server_ttft_ms!);
          fidelity.push([String(agents), deltas.length, percentile(deltas, 50), percentile(deltas, 99), rl.loopDelayP99Ms, rl.saturatedWindows]);
        }
      }
      if (regime.name.startsWith('paced') && levels.includes(1024)) beyond.push(...(await beyondOneCore(engine.url, regime.level(1024))));
    } finally {
      await engine.stop();
    }
    printTable(
      `client cost, ${regime.name}: SSE events per CPU-second of the client process (engine in its own process)`,
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
      printTable(`timing fidelity, ${regime.name}: client TTFT − engine-stamped TTFT`, ['agents', 'requests', 'p50 ms', 'p99 ms', 'loop delay p99 ms', 'saturated win'], fidelity);
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

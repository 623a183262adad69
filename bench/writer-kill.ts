// What a SIGKILL loses: a `roundload run` (its own process) against a minimal streaming server in this
// process that notes when it finished sending each answer; the run is SIGKILLed mid-way and the records on
// disk are compared with what the server completed. The figure is how far back from the kill the server's
// completions stop being on disk (request records only: one per completed answer).
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJsonlFile } from '../src/results/index.js';
import { printTable } from './lib.js';
// The same CLI the tests start (built when they run compiled, else the source through tsx).
import { cliArgs, ROOT } from '../test/helpers/root.js';

const nowMs = (): number => performance.timeOrigin + performance.now();

export interface KillLoss {
  /** Answers the server had finished sending when the run was killed. */
  serverCompleted: number;
  /** Whole request records on disk afterwards. */
  onDisk: number;
  /** Completed answers with no record on disk. */
  lost: number;
  /** Age at the kill of the oldest completed answer without a record (0: none lost). */
  lostWindowMs: number;
  /** The last line of requests.jsonl was cut (skipped by readers, counted in `lost`). */
  tornLastLine: boolean;
  /** Worst event-loop delay the run sampled (client_sample loop_delay_max_ms on disk). */
  loopDelayMaxMs: number;
  /** Completions per second over the run. */
  answersPerS: number;
}

/** An OpenAI-compatible streaming server, minimal: one short answer per request after `delayMs`. */
function answerServer(delayMs: number, completions: number[]): Server {
  const env = { id: 'chatcmpl-bench', created: 0, model: 'deepseek-v4-flash' };
  const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
    `data: ${JSON.stringify({ ...env, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ ...env, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 100, completion_tokens: 3, total_tokens: 103 } })}\n\n`;
  const body = chunk({ role: 'assistant', content: '' }, null) + chunk({ content: 'all done here' }, null) + chunk({}, 'stop') + usage + 'data: [DONE]\n\n';
  return createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'deepseek-v4-flash', object: 'model' }] }));
      return;
    }
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        // Called once the whole answer is handed to the kernel: from here the client has it.
        res.end(body, () => completions.push(nowMs()));
      }, delayMs);
    });
  });
}

/** One kill: `agents` agents with no think time, killed once `killAfterRecords` records are on disk. */
export async function measureKillLoss(
  options: { agents?: number; answerDelayMs?: number; killAfterRecords?: number; timeoutMs?: number; inspect?: (out: string) => Promise<void> } = {},
): Promise<KillLoss> {
  const dir = mkdtempSync(join(tmpdir(), 'roundload-kill-'));
  const completions: number[] = [];
  const server = answerServer(options.answerDelayMs ?? 20, completions);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const out = join(dir, 'run');
  const workload = join(dir, 'kill.yaml');
  writeFileSync(workload, `name: kill\nduration: 10m\nagents: {count: ${options.agents ?? 8}, rounds: 10, think_time_ms: 0}\nconversation: {tools: none, max_tokens: 16}\nmonitor: {enabled: false}\n`);
  const child = spawn(process.execPath, cliArgs('run', workload, '--target', `http://127.0.0.1:${port}`, '--out', out), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const requests = join(out, 'requests.jsonl');
  const want = options.killAfterRecords ?? 200;
  const until = Date.now() + (options.timeoutMs ?? 60_000);
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the run ended before the kill: ${stderr}`);
      if (Date.now() > until) throw new Error(`fewer than ${want} records after ${options.timeoutMs ?? 60_000} ms: ${stderr}`);
      if (existsSync(requests) && readFileSync(requests, 'utf8').split('\n').length > want) break;
      await sleep(50);
    }
    // A moment unrelated to the write just seen (a writer flushing every second would still be caught).
    await sleep(300 + Math.random() * 1200);
    const killedAtMs = nowMs();
    child.kill('SIGKILL');
    await exited;
    const done = completions.filter((t) => t <= killedAtMs).sort((a, b) => a - b);
    const report = await readJsonlFile(
      requests,
      (v): v is Record<string, unknown> => typeof v === 'object' && v !== null,
      () => {},
    );
    let loopDelayMaxMs = 0;
    await readJsonlFile(
      join(out, 'events.jsonl'),
      (v): v is { kind: string; loop_delay_max_ms?: number } => typeof v === 'object' && v !== null,
      (e) => {
        if (e.kind === 'client_sample' && e.loop_delay_max_ms !== undefined) loopDelayMaxMs = Math.max(loopDelayMaxMs, e.loop_delay_max_ms);
      },
    );
    await options.inspect?.(out);
    const onDisk = report.records;
    const lost = Math.max(0, done.length - onDisk);
    const spanS = done.length < 2 ? 1 : (done.at(-1)! - done[0]!) / 1000;
    return {
      serverCompleted: done.length,
      onDisk,
      lost,
      lostWindowMs: lost === 0 ? 0 : Math.round(killedAtMs - done[onDisk]!),
      tornLastLine: report.skipped.some((s) => s.reason === 'truncated'),
      loopDelayMaxMs,
      answersPerS: Math.round(done.length / spanS),
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `npm run bench -- kill [times]`: the figure behind docs/results.md ("What a kill loses"). */
export async function writerKillBench(args: string[]): Promise<number> {
  const times = Number(args[0] ?? 10);
  const rows: (string | number)[][] = [];
  for (let i = 0; i < times; i += 1) {
    const r = await measureKillLoss();
    rows.push([i + 1, r.answersPerS, r.serverCompleted, r.onDisk, r.lost, r.lostWindowMs, r.tornLastLine ? 'yes' : 'no', r.loopDelayMaxMs]);
  }
  printTable('SIGKILL mid-run: answers the server completed vs request records on disk', ['kill', 'answers/s', 'completed', 'on disk', 'lost', 'lost window ms', 'torn line', 'loop max ms'], rows);
  const windows = rows.map((r) => r[5] as number).sort((a, b) => a - b);
  process.stdout.write(`lost window: median ${windows[Math.floor(windows.length / 2)]} ms, max ${windows.at(-1)} ms over ${times} kills\n`);
  return 0;
}

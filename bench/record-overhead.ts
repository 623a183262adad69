// What `roundload record` adds to the harness's latency: the same streaming requests sent alternately straight
// to the engine and through the recorder (each in its own process, so the client's CPU is its own), one at a
// time on a keep-alive connection each; TTFT (to the first content token) and e2e, and their differences.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { percentile, printTable, startEngineProcess } from './lib.js';

const ROOT = new URL('../', import.meta.url).pathname;

async function startRecorderProcess(upstream: string, out: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'record', '--upstream', upstream, '--listen', '127.0.0.1:0', '--out', out], {
    stdio: ['ignore', 'pipe', 'ignore'],
    cwd: ROOT,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('recorder did not start in 20 s')), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(text.trim());
      }
    });
  });
  return { url, stop: () => child.kill('SIGINT') };
}

async function once(client: Client, body: string): Promise<{ ttftMs: number; e2eMs: number }> {
  const t0 = performance.now();
  const res = await client.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
  let ttftMs = -1;
  for await (const chunk of res.body) {
    if (ttftMs < 0 && (chunk as Buffer).includes('"content":"')) ttftMs = performance.now() - t0;
  }
  return { ttftMs, e2eMs: performance.now() - t0 };
}

export async function recordOverheadBench(requests = 300): Promise<void> {
  const engine = await startEngineProcess({ decode_step_ms: 2, output_tokens_min: 64, output_tokens_max: 64, tool_call_ratio: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'roundload-record-bench-'));
  const recorder = await startRecorderProcess(engine.url, join(dir, 'trace.jsonl'));
  const direct = new Client(engine.url, { keepAliveTimeout: 60_000 });
  const recorded = new Client(recorder.url, { keepAliveTimeout: 60_000 });
  // A 16k-character prompt (about 4k tokens) in 20 messages: the recorder reads every byte of it.
  const messages = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${'lorem ipsum dolor sit amet '.repeat(30)}` }));
  const body = JSON.stringify({ model: 'deepseek-v4-flash', stream: true, stream_options: { include_usage: true }, max_tokens: 64, messages });
  const d: { ttftMs: number; e2eMs: number }[] = [];
  const r: { ttftMs: number; e2eMs: number }[] = [];
  try {
    for (let i = 0; i < 20; i += 1) {
      await once(direct, body);
      await once(recorded, body);
    }
    for (let i = 0; i < requests; i += 1) {
      // Alternate which goes first, so drift in the engine's state favours neither.
      if (i % 2 === 0) {
        d.push(await once(direct, body));
        r.push(await once(recorded, body));
      } else {
        r.push(await once(recorded, body));
        d.push(await once(direct, body));
      }
    }
  } finally {
    await direct.close();
    await recorded.close();
    recorder.stop();
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const row = (name: string, pick: (x: { ttftMs: number; e2eMs: number }) => number) => {
    const a = d.map(pick);
    const b = r.map(pick);
    const diff = b.map((v, i) => v - (a[i] ?? 0));
    return [name, percentile(a, 50).toFixed(2), percentile(b, 50).toFixed(2), percentile(diff, 50).toFixed(2), percentile(a, 90).toFixed(2), percentile(b, 90).toFixed(2)];
  };
  printTable(
    `record overhead: ${requests} streaming requests each way, 16k-character prompt, 64 tokens out, one at a time`,
    ['ms', 'direct p50', 'recorded p50', 'added p50 (paired)', 'direct p90', 'recorded p90'],
    [row('ttft', (x) => x.ttftMs), row('e2e', (x) => x.e2eMs)],
  );
}

// `npm run bench -- otel [agents] [--repeat N]`: what exporting roundload's spans over OTLP costs the client.
// The same paced run (50 tokens/s a stream, one round, 1,000 agents by default) against one engine process,
// with the export off and on (to a receiver in another process that takes every request), alternated
// off/on then on/off; the figure is CPU per SSE event over the measured span (first send to last end), and
// the claim is that the export costs at most 5% of it (issue 44).
import { spawn } from 'node:child_process';
import { collectGarbage, REGIMES, roundloadRun, type RoundloadFigures } from './client-cost.js';
import { percentile, printTable, startEngineProcess } from './lib.js';

/** A receiver that reads each body and answers 200: the collector the export talks to, off this process. */
const RECEIVER = `
const http = require('node:http');
let spans = 0;
const server = http.createServer((req, res) => { req.on('data', () => {}); req.on('end', () => { spans += 1; res.writeHead(200).end('{}'); }); });
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

async function startReceiver(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the receiver did not start in 10 s')), 10_000);
    child.stdout.on('data', (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString());
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return { url: `http://127.0.0.1:${port}/v1/traces`, stop: () => child.kill('SIGTERM') };
}

export async function otelCostBench(args: string[]): Promise<number> {
  const at = args.indexOf('--repeat');
  const repeat = at >= 0 ? Number(args[at + 1]) : 3;
  const agents = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--repeat') ?? 1000);
  const regime = REGIMES[1]!;
  const engine = await startEngineProcess(regime.engine);
  const receiver = await startReceiver();
  const level = { agents, rounds: 1, maxTokens: 150 };
  const on = `tracing: {otlp: {traces_endpoint: "${receiver.url}"}}`;
  const perEvent: Record<'off' | 'on', number[]> = { off: [], on: [] };
  const rows: (string | number)[][] = [];
  try {
    for (let i = 0; i < repeat; i += 1) {
      for (const mode of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        collectGarbage();
        const f: RoundloadFigures = await roundloadRun(engine.url, level, mode === 'on' ? on : '');
        const us = (f.cpuS / f.events) * 1e6;
        perEvent[mode].push(us);
        rows.push([i + 1, mode, f.records.length, f.events, f.cpuS.toFixed(2), us.toFixed(2), f.loopDelayP99Ms.toFixed(1)]);
      }
    }
  } finally {
    receiver.stop();
    await engine.stop();
  }
  printTable(`OTLP export cost, ${agents} agents × 1 round, paced (CPU per SSE event over the measured span)`, ['round', 'export', 'requests', 'events', 'CPU s', 'µs/event', 'loop p99 ms'], rows);
  const off = percentile(perEvent.off, 50);
  const onMedian = percentile(perEvent.on, 50);
  const ratio = onMedian / off;
  process.stdout.write(`median µs/event: off ${off.toFixed(2)}, on ${onMedian.toFixed(2)}: on/off ${ratio.toFixed(3)} (claim: ≤ 1.05)\n`);
  return ratio <= 1.05 ? 0 : 1;
}

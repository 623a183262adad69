// `npm run bench -- profile [agents] [batched|paced]`: a CPU profile of roundload's own part of the client
// bench (one roundload run at the bench's load against the engine in its own process), with no bare loop
// in it. Prints the functions with the most self time and writes the whole profile for Chrome's DevTools.
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REGIMES, roundloadRun } from './client-cost.js';
import { printTable, startEngineProcess } from './lib.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  startTime: number;
  endTime: number;
}

export async function profileBench(args: string[]): Promise<number> {
  const agents = Number(args[0] ?? 96);
  const regime = REGIMES.find((r) => r.name.startsWith(args[1] ?? 'batched'));
  if (!Number.isInteger(agents) || agents < 1 || regime === undefined) {
    process.stderr.write('usage: npm run bench -- profile [agents] [batched|paced]\n');
    return 2;
  }
  const engine = await startEngineProcess(regime.engine);
  const session = new Session();
  session.connect();
  try {
    await roundloadRun(engine.url, { agents: 4, rounds: 2, maxTokens: 50 });
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    const run = await roundloadRun(engine.url, regime.level(agents));
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
    const file = join(tmpdir(), `roundload-${agents}-${regime.name.split(' ')[0]}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    const total = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
    const self = new Map<string, number>();
    for (const n of profile.nodes) {
      const f = n.callFrame;
      const where = f.url === '' ? '' : `${relative(process.cwd(), f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}`;
      const key = `${f.functionName || '(anonymous)'} ${where}`;
      self.set(key, (self.get(key) ?? 0) + (n.hitCount ?? 0));
    }
    const rows = [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30)
      .map(([name, hits]) => [name.slice(0, 110), Math.round((hits / total) * 1000) / 10]);
    process.stdout.write(`${run.events} events, ${run.cpuS.toFixed(2)} cpu-s, ${Math.round(run.events / run.cpuS)} ev/cpu-s; profile ${file}\n`);
    printTable(`self time, ${regime.name}, ${agents} agents (main thread)`, ['function', '% of samples'], rows);
    return 0;
  } finally {
    session.disconnect();
    await engine.stop();
  }
}

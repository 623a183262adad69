// `npm run bench -- profile [agents] [batched|paced]`: CPU profiles of the client bench's measured span (first
// request sent to last request ended), once for roundload and once for the bare loop at the same load, side by
// side: the main thread's busy time per SSE event by where it went (our files, each library, Node's internals,
// native calls, the garbage collector), so what roundload spends beyond the bare loop is named. Also prints
// roundload's functions with the most self time, and writes both profiles for Chrome's DevTools.
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REGIMES, bareRun, collectGarbage, firstBody, roundloadRun, type SpanHooks } from './client-cost.js';
import { printTable, startEngineProcess } from './lib.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's time goes: a file of ours, a library, a Node internal module, or a native call by name. */
function groupOf(f: ProfileNode['callFrame']): string {
  const url = f.url.replace(/^file:\/\//, '');
  const ours = /\/(src|bench)\/(.*)$/.exec(url);
  if (ours !== null && !url.includes('/node_modules/')) return `${ours[1]}/${ours[2]}`;
  const lib = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (lib !== null) return lib[1]!;
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:');
  if (url.startsWith('wasm:')) return 'wasm (undici llhttp)';
  return f.functionName === '' ? '(native)' : f.functionName;
}

/** Busy microseconds by key (idle samples left out), the profile's own sampling period applied. */
function busyUs(profile: Profile, key: (f: ProfileNode['callFrame']) => string): Map<string, number> {
  const hits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
  const usPerSample = hits === 0 ? 0 : (profile.endTime - profile.startTime) / hits;
  const out = new Map<string, number>();
  for (const n of profile.nodes) {
    if (n.callFrame.functionName === '(idle)' || (n.hitCount ?? 0) === 0) continue;
    const k = key(n.callFrame);
    out.set(k, (out.get(k) ?? 0) + n.hitCount! * usPerSample);
  }
  return out;
}

const sum = (m: Map<string, number>): number => [...m.values()].reduce((s, v) => s + v, 0);

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
    await bareRun(engine.url, 4, 8, firstBody(50));
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    // The profiler runs over the measured span only, as the client bench counts CPU.
    let stopped: Promise<{ profile: Profile }> | null = null;
    const span = (): SpanHooks => ({
      start: () => void session.post('Profiler.start'),
      end: () => {
        stopped = session.post('Profiler.stop') as Promise<{ profile: Profile }>;
      },
    });
    const level = regime.level(agents);
    const name = regime.name.split(' ')[0]!;
    collectGarbage();
    const rl = await roundloadRun(engine.url, level, '', span());
    const rlProfile = (await stopped!).profile;
    collectGarbage();
    stopped = null;
    const bare = await bareRun(engine.url, level.agents, level.agents * level.rounds, firstBody(level.maxTokens), 'plain', span());
    const bareProfile = (await stopped!).profile;
    const files = [rlProfile, bareProfile].map((p, i) => {
      const file = join(tmpdir(), `roundload-${agents}-${name}-${i === 0 ? 'roundload' : 'bare'}.cpuprofile`);
      writeFileSync(file, JSON.stringify(p));
      return file;
    });
    const rlBy = busyUs(rlProfile, groupOf);
    const bareBy = busyUs(bareProfile, groupOf);
    const perEvent = (us: number, events: number): number => us / events;
    process.stdout.write(
      `roundload: ${rl.events} events, ${rl.cpuS.toFixed(2)} cpu-s (all threads), main thread busy ${perEvent(sum(rlBy), rl.events).toFixed(1)} µs/event\n` +
        `bare:      ${bare.events} events, ${bare.cpuS.toFixed(2)} cpu-s, main thread busy ${perEvent(sum(bareBy), bare.events).toFixed(1)} µs/event\n` +
        'The samples are wall-clock: a main thread waiting for a CPU (a loaded machine) is sampled as busy, in\n' +
        'whatever it was running, so on a busy machine compare the shares, not the µs. Other threads (the results\n' +
        `writer, V8's background GC) are not sampled. Profiles: ${files.join(' ')}\n`,
    );
    const keys = new Set([...rlBy.keys(), ...bareBy.keys()]);
    const rows = [...keys]
      .map((k) => {
        const a = perEvent(rlBy.get(k) ?? 0, rl.events);
        const b = perEvent(bareBy.get(k) ?? 0, bare.events);
        return [k, a, b] as [string, number, number];
      })
      .sort((x, y) => y[1] - x[1])
      .filter((r) => r[1] >= 0.05 || r[2] >= 0.05)
      .slice(0, 40);
    const rlBusy = perEvent(sum(rlBy), rl.events);
    const bareBusy = perEvent(sum(bareBy), bare.events);
    const pct = (v: number, of: number): number => (of === 0 ? Number.NaN : (100 * v) / of);
    printTable(
      `main-thread busy time per SSE event, ${regime.name}, ${agents} agents: roundload beside the bare loop`,
      ['where', 'roundload µs/event', 'roundload % of busy', 'bare µs/event', 'bare % of busy'],
      [...rows.map(([k, a, b]) => [k, a, pct(a, rlBusy), b, pct(b, bareBusy)]), ['all', rlBusy, 100, bareBusy, 100]],
    );
    const top = [...busyUs(rlProfile, (f) => `${f.functionName || '(anonymous)'} ${groupOf(f)}`).entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([k, us]) => [k.slice(0, 110), perEvent(us, rl.events), (100 * us) / sum(rlBy)]);
    printTable(`roundload's self time by function, ${regime.name}, ${agents} agents (main thread)`, ['function', 'µs/event', '% of busy'], top);
    return 0;
  } finally {
    session.disconnect();
    await engine.stop();
  }
}

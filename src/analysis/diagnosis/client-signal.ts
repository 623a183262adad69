// The client's own part: were its timers late while the requests hung? A hang whose deadline fired while
// the client's event loop ran late by a good part of that deadline may be the client's own delay. Then the
// process's CPU use splits it: busy (its own work: `client`) or starved (the host did not run it: `host_starved`).
// One late second beside an episode is not enough: the late windows must cover most hangs and two seconds.
import type { Context } from './context.js';
import type { Episode } from './episodes.js';
import type { ClientWindow, HangSpan } from './inputs.js';
import { dur, pct, s1 } from './text.js';
import { DECISIVE, MEDIUM, vote, type Signal } from './votes.js';

/** A hang counts as the client's when its loop ran this late (at least) over the hang's life… */
const LATE_FLOOR_MS = 200;
/** …and at least this share of the deadline that fired. */
const LATE_SHARE_OF_DEADLINE = 0.25;
/** Late windows must cover this much time: no verdict from one second of data. */
const MIN_LATE_MS = 2000;
/** Below this CPU use (share of one core) over the late windows the process was starved, not busy. */
const STARVED_CPU_SHARE = 0.5;
/** Run-queue wait (Linux schedstat) over the episode's sample windows from which the host starved the process:
 * at least this much of the time, and STARVED_WAIT_MIN_MS in all. */
const STARVED_WAIT_SHARE = 0.3;
const STARVED_WAIT_MIN_MS = 1000;
/** Without CPU figures (older files): utilisation from which the loop was busy. */
const BUSY_UTILIZATION = 0.9;

/** Over the windows a hang's life overlaps, the kernel kept the process waiting for a CPU at least this share
 * of the time: a process that could not run could not read its sockets, whatever its loop-delay sampler saw
 * (its ticks are as starved as the rest). */
const STARVED_DURING_HANG_SHARE = 0.5;

/** Whether the client's loop ran late enough over the hang's life to explain its deadline firing. */
function lateEnough(h: HangSpan, windows: readonly ClientWindow[]): boolean {
  let late = 0;
  for (const w of windows) if (w.from_ms <= h.to_ms && h.from_ms <= w.to_ms) late = Math.max(late, w.delay_max_ms);
  return late >= Math.max(LATE_FLOOR_MS, LATE_SHARE_OF_DEADLINE * (h.deadline_ms ?? 0));
}

/** Whether the run queue held the process back through most of the hang's life (Linux schedstat). */
function starvedDuring(h: HangSpan, windows: readonly ClientWindow[]): boolean {
  let waitMs = 0;
  let coveredMs = 0;
  for (const w of windows) {
    if (typeof w.cpu_wait_ms !== 'number' || w.from_ms > h.to_ms || h.from_ms > w.to_ms) continue;
    waitMs += w.cpu_wait_ms;
    coveredMs += w.to_ms - w.from_ms;
  }
  return coveredMs > 0 && waitMs >= STARVED_DURING_HANG_SHARE * coveredMs;
}

/** The episode's hangs the client's own delay explains: its loop late enough over the hang's life, or the
 * kernel holding it off the CPU through most of it. */
export function explainedByLateness(ep: Episode, ctx: Context): HangSpan[] {
  const windows = ctx.clientIn({ from_ms: ep.from_ms, to_ms: ep.to_ms });
  return ep.hangs.filter((h) => lateEnough(h, windows) || starvedDuring(h, windows));
}

export function clientSignal(ep: Episode, ctx: Context): Signal {
  const signal: Signal = { votes: [], facts: [] };
  if (ep.hangs.length === 0 || ctx.client.length === 0) return signal;
  const windows = ctx.clientIn({ from_ms: ep.from_ms, to_ms: ep.to_ms });
  const explained = explainedByLateness(ep, ctx);
  const late = windows.filter((w) => w.delay_max_ms >= LATE_FLOOR_MS);
  const worst = windows.reduce((m, w) => Math.max(m, w.delay_max_ms), 0);
  const worstP99 = windows.reduce((m, w) => Math.max(m, w.delay_p99_ms), 0);
  const lateMs = late.reduce((sum, w) => sum + (w.to_ms - w.from_ms), 0);
  // The kernel's own account of the wait for a CPU: direct, and not limited to the sampler's late ticks.
  const withWait = windows.filter((w) => typeof w.cpu_wait_ms === 'number');
  const waitMs = withWait.reduce((sum, w) => sum + w.cpu_wait_ms!, 0);
  const waitCoveredMs = withWait.reduce((sum, w) => sum + (w.to_ms - w.from_ms), 0);
  const waited = waitCoveredMs >= MIN_LATE_MS && waitMs >= STARVED_WAIT_MIN_MS && waitMs >= STARVED_WAIT_SHARE * waitCoveredMs;
  if (explained.length * 2 >= ep.hangs.length && (lateMs >= MIN_LATE_MS || waited)) {
    const windowMs = late.reduce((sum, w) => sum + (w.to_ms - w.from_ms), 0);
    const withCpu = late.filter((w) => w.cpu_ms !== null);
    const cpuShare =
      withCpu.length === 0
        ? null
        : withCpu.reduce((sum, w) => sum + w.cpu_ms!, 0) /
          Math.max(
            1,
            withCpu.reduce((sum, w) => sum + (w.to_ms - w.from_ms), 0),
          );
    const elu = late.reduce((m, w) => Math.max(m, w.utilization), 0);
    const offCpu = explained.some((h) => !lateEnough(h, windows));
    const base = `${explained.length} of ${ep.hangs.length} hangs came while the client's event loop ran up to ${dur(worst)} late (${late.length} sample window${late.length === 1 ? '' : 's'}, ${s1(windowMs)})${offCpu ? ' or the kernel held it off the CPU most of their time' : ''}: its own deadlines fired on its own delay, and what it measured then (canaries, scrapes) measured itself`;
    // Waiting for a CPU while the process itself kept a core busy is its own contention (its threads), not the host's.
    const starved = (waited && (cpuShare === null || cpuShare < 1)) || (cpuShare !== null ? cpuShare < STARVED_CPU_SHARE : elu < BUSY_UTILIZATION);
    if (starved) {
      const waitText = waited ? `the kernel kept it waiting for a CPU ${s1(waitMs)} of ${s1(waitCoveredMs)} (run queue)` : null;
      const cpuText = cpuShare === null ? `its loop utilisation stayed at ${pct(elu)} (no CPU figures in this file)` : `the process used ${pct(cpuShare)} of a CPU core meanwhile`;
      const cpu = waitText === null ? cpuText : `${waitText}, and ${cpuText}`;
      signal.votes.push(
        vote(
          DECISIVE,
          `${base}; yet ${cpu}: it was not busy, the host did not give it the CPU (other processes on its cores, a CPU limit, a paused VM)`,
          ['host_starved'],
          ['client', 'proxy', 'engine', 'engine_overloaded', 'network'],
        ),
      );
    } else {
      const cpu = cpuShare === null ? `its loop utilisation reached ${pct(elu)}` : `the process used ${pct(cpuShare)} of a CPU core meanwhile`;
      signal.votes.push(vote(DECISIVE, `${base}; ${cpu}: the client itself was too busy to read its sockets in time`, ['client'], ['host_starved', 'proxy', 'engine', 'engine_overloaded', 'network']));
    }
    return signal;
  }
  if (late.length > 0 || worstP99 >= 50) {
    const deadline = Math.min(...ep.hangs.map((h) => h.deadline_ms ?? Infinity));
    signal.votes.push(
      vote(
        MEDIUM,
        `the client's event loop ran at most ${dur(worst)} late over the episode (p99 up to ${dur(worstP99)}, ${late.length} late window${late.length === 1 ? '' : 's'})${Number.isFinite(deadline) ? ` against deadlines of ${dur(deadline)} and more` : ''}: it explains ${explained.length} of ${ep.hangs.length} hangs, not the episode`,
        [],
        ['client', 'host_starved'],
      ),
    );
  }
  return signal;
}

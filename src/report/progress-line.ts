// The text of a progress line and of an announcement: figures become fields, each with a priority; a line
// that must fit a width drops whole fields, least important first (never cuts one). Colour through
// picocolors when asked; widths are counted on the plain text.
import pc from 'picocolors';
import type { RequestRecord } from '../types/index.js';
import { printable } from '../util/index.js';
import type { Notice, ProgressFigures } from './progress-state.js';

/** picocolors' formatters (all identity functions when colour is off). */
export type Colors = ReturnType<typeof pc.createColors>;

/** Colour on or off: `createColors(false)` gives formatters that return the text unchanged. */
export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

/** Whether a stream gets colour: a terminal, and `NO_COLOR` unset or empty (https://no-color.org). */
export function colorWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

type Tone = 'plain' | 'time' | 'bad' | 'warn' | 'dim';

export interface Field {
  text: string;
  /** Higher stays longer when the line must shrink. */
  priority: number;
  tone: Tone;
}

/** `0:07`, `12:30`, `1:02:03`: whole seconds, down (`nearest`: to the nearest, for a time left). */
export function clock(ms: number, nearest = false): string {
  const total = Math.max(0, nearest ? Math.round(ms / 1000) : Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** A latency or an age: `0.8 ms`, `45 ms`, `1.2 s`. */
export function ms(v: number): string {
  if (v >= 1000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 10) return `${Math.round(v)} ms`;
  return `${v.toFixed(1)} ms`;
}

function rate(v: number | null): string {
  if (v === null) return '–';
  return v >= 100 ? String(Math.round(v)) : v.toFixed(1);
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The fields of one progress line, in display order. */
export function progressFields(figures: ProgressFigures): Field[] {
  // Phase, gauge and target names come from the workload and the targets' /metrics: one line, no controls.
  const f = printable(figures);
  const out: Field[] = [{ text: `[${clock(f.elapsedMs)}]`, priority: 100, tone: 'time' }];
  if (f.remainingMs !== null) out.push({ text: f.remainingMs > 0 ? `${clock(f.remainingMs, true)} left` : 'time up, finishing', priority: 70, tone: 'plain' });
  if (f.phase !== null) out.push({ text: `phase ${f.phase}`, priority: 65, tone: 'plain' });
  out.push({ text: `${f.done}${f.planned === null ? '' : `/${f.planned}`} req`, priority: 97, tone: 'plain' });
  out.push({ text: `${rate(f.requestsPerS)} req/s`, priority: 60, tone: 'plain' });
  out.push({ text: `${rate(f.outputTokensPerS)} tok/s`, priority: 50, tone: 'plain' });
  out.push({ text: f.ttftP50Ms === null || f.ttftP99Ms === null ? 'TTFT –' : `TTFT p50 ${ms(f.ttftP50Ms)} p99 ${ms(f.ttftP99Ms)}`, priority: 55, tone: 'plain' });
  out.push({ text: plural(f.errors, 'error', 'errors'), priority: 90, tone: f.errors > 0 ? 'warn' : 'plain' });
  out.push({ text: plural(f.hangs, 'hang', 'hangs'), priority: 95, tone: f.hangs > 0 ? 'bad' : 'plain' });
  out.push({ text: `${f.inFlight} in flight`, priority: 80, tone: 'plain' });
  // A stream's rate: the interval's output tokens shared by the streams going (a long healthy answer is never 0).
  const each = f.outputTokensPerS !== null && f.outputTokensPerS > 0 ? `, ~${rate(f.outputTokensPerS / f.streaming)} tok/s each` : '';
  if (f.streaming > 0) out.push({ text: `${f.streaming} streaming${each}`, priority: 46, tone: 'plain' });
  if (f.oldestInFlightMs !== null) out.push({ text: `oldest ${ms(f.oldestInFlightMs)}`, priority: 45, tone: 'plain' });
  const a = f.arrivals;
  if (a !== null) {
    out.push({ text: `${rate(a.startsPerS)} conv/s`, priority: 62, tone: 'plain' });
    out.push({ text: `${a.active} active`, priority: 82, tone: 'plain' });
    out.push({ text: a.startLagP99Ms === null ? 'lag –' : `lag p99 ${ms(a.startLagP99Ms)}`, priority: 58, tone: 'plain' });
    if (a.delayed > 0) out.push({ text: `${a.delayed} delayed`, priority: 86, tone: 'warn' });
  }
  if (f.targetsDown.length > 0) out.push({ text: `DOWN ${f.targetsDown.join(',')}`, priority: 88, tone: 'bad' });
  f.gauges.forEach((g, i) => out.push({ text: `${g.name}=${Number.isInteger(g.value) ? g.value : g.value.toFixed(2)}`, priority: 30 - i / 100, tone: 'dim' }));
  return out;
}

/** Visible width of fields joined as `render` joins them. */
function widthOf(fields: readonly Field[]): number {
  return fields.reduce((w, f, i) => w + f.text.length + (i === 0 ? 0 : i === 1 ? 1 : 3), 0);
}

/** The fields that fit `width` columns, in their order: the least important dropped first, whole. */
export function fitFields(fields: readonly Field[], width: number): Field[] {
  let kept = [...fields];
  while (kept.length > 0 && widthOf(kept) > width) {
    const lowest = kept.reduce((low, f) => (f.priority < low.priority ? f : low));
    kept = kept.filter((f) => f !== lowest);
  }
  return kept;
}

function paint(f: Field, c: Colors): string {
  switch (f.tone) {
    case 'time':
      return c.cyan(f.text);
    case 'bad':
      return c.bold(c.red(f.text));
    case 'warn':
      return c.yellow(f.text);
    case 'dim':
      return c.dim(f.text);
    default:
      return f.text;
  }
}

/** `[0:12] 0:13 left · 120/256 requests · …`: the time, a space, then the fields between dim dots. */
export function render(fields: readonly Field[], c: Colors): string {
  const [first, ...rest] = fields;
  if (first === undefined) return '';
  return rest.length === 0 ? paint(first, c) : `${paint(first, c)} ${rest.map((f) => paint(f, c)).join(c.dim(' · '))}`;
}

/** Outside text already made {@link printable}, its runs of spaces as one, cut to `max` characters. */
function shortened(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function hangSentence(r: RequestRecord): string {
  const h = r.hang;
  const where = `${r.conversation} round ${r.round} (agent ${r.agent})`;
  if (h === null) return `${where}: hung`;
  const chunks = h.chunks === undefined ? '' : `, ${plural(h.chunks, 'chunk', 'chunks')} in`;
  const socket = r.connection === null ? '' : ` · socket ${r.connection.id} request ${r.connection.nth}`;
  const wait = h.policy === 'wait' ? ' · on_hang wait: kept open until total_ms' : '';
  return `${where}: ${h.phase} hang (${h.deadline} = ${h.deadline_ms} ms), silent ${ms(h.last_byte_age_ms)}${chunks}${socket}${wait}`;
}

/** One announcement line, e.g. `[0:12] HANG a3-c1 round 5 (agent 3): mid_stream, stall_ms 10000 ms passed…`. */
export function noticeLine(notice: Notice, c: Colors): string {
  // What a server sent (an error message, a target's error) and what a record holds: one line, no controls.
  const n = printable(notice);
  const at = c.cyan(`[${clock(n.atMs)}]`);
  switch (n.kind) {
    case 'hang':
      return `${at} ${c.bold(c.red('HANG'))} ${hangSentence(n.record)}`;
    case 'first_error':
      return `${at} ${c.yellow('ERROR')} first of class ${c.bold(n.errorClass)}: ${n.conversation} round ${n.round} (agent ${n.agent}): ${shortened(n.message, 200)}`;
    case 'target_down':
      return `${at} ${c.bold(c.red('MONITOR'))} ${n.target} ${n.lastUpAgoMs === null ? 'not answering' : `down (last good scrape ${ms(n.lastUpAgoMs)} ago)`}: ${shortened(n.error, 200)} (${n.url})`;
    case 'target_up':
      return `${at} ${c.green('MONITOR')} ${n.target} back up after ${ms(n.downForMs)} down`;
    case 'delayed':
      return `${at} ${c.yellow('ARRIVALS')} max_active reached: ${n.conversation} (${n.phase}) waited ${ms(n.lagMs)} for a slot with ${n.active} conversations running; arrivals now queue and their start lag grows (agents.arrival.max_active)`;
    case 'saturated':
      if (!n.busy) {
        const wait = n.cpuWaitMs === null || n.cpuWaitMs < 1 ? '' : `, waited ${ms(n.cpuWaitMs)} of ${ms(n.windowMs)} for a CPU`;
        return `${at} ${c.yellow('CLIENT')} late${n.thread === null ? '' : ` (worker ${n.thread})`}: event-loop delay p99 ${ms(n.loopDelayP99Ms)} at utilisation ${Math.round(n.utilization * 100)}%${wait}, ${n.inFlight} in flight: not busy, the host held it back (other processes on its cores, a CPU limit); latencies now are suspect`;
      }
      return `${at} ${c.yellow('CLIENT')} saturated${n.thread === null ? '' : ` (worker ${n.thread})`}: event-loop delay p99 ${ms(n.loopDelayP99Ms)}, utilisation ${Math.round(n.utilization * 100)}%, ${n.inFlight} in flight: the client is the bottleneck, latencies now are suspect`;
  }
}

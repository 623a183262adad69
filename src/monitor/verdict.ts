// The call on each gauge series: idle, rotating, pinned, stale, or insufficient (too short a window to tell).
// Pure: folded scrapes and the client's requests in, verdicts out. A gauge is never judged alone: a steady
// value is read together with the target's flow counter, client completions and requests in flight.
import type { GaugeFlow, GaugeVerdict, GaugeVerdictKind, ScrapeEvent } from '../types/index.js';
import { ClientActivity, flowCounter, GaugeStore, labelKey, type CounterTrack, type GaugeSeries, type Stretch } from './series.js';
import { baseName } from './select.js';

export interface VerdictOptions {
  /** Non-zero and unchanged this long with no flow is a pin; a shorter steady stretch tells nothing. */
  pinAfterS: number;
}

/** Share of a no-flow stretch with client requests in flight above which it is a pin, not a stale reading. */
const PIN_IN_FLIGHT_SHARE = 0.5;

type StretchKind = 'pinned' | 'stale' | 'steady_flow' | 'undecided';

interface Judged {
  stretch: Stretch;
  kind: StretchKind;
  /** The longest part of the stretch with no flow at all. */
  gapStartMs: number;
  gapEndMs: number;
  /** Share of the no-flow part with client requests in flight. */
  inFlight: number;
  completions: number;
  counterMoves: number;
}

/** Verdicts of every gauge series in `store`, in target, name, labels order. */
export function judgeGauges(store: GaugeStore, client: ClientActivity, options: VerdictOptions): GaugeVerdict[] {
  const out: GaugeVerdict[] = [];
  const series = [...store.series.values()].sort((a, b) => a.target.localeCompare(b.target) || a.name.localeCompare(b.name) || labelKey(a.labels).localeCompare(labelKey(b.labels)));
  for (const s of series) out.push(judgeSeries(s, flowCounter(store.targets.get(s.target)), client, options));
  return out;
}

/** Convenience for tests and rebuilds: scrapes and request records straight to verdicts. */
export function gaugeVerdicts(scrapes: Iterable<ScrapeEvent>, requests: Iterable<{ run_ms: number; e2e_ms: number; status: string }>, options: VerdictOptions): GaugeVerdict[] {
  const store = new GaugeStore(options.pinAfterS * 1000);
  for (const e of scrapes) store.add(e);
  const client = new ClientActivity();
  for (const r of requests) client.add(r.run_ms, r.run_ms + r.e2e_ms, r.status === 'ok');
  return judgeGauges(store, client, options);
}

export function judgeSeries(s: GaugeSeries, flow: CounterTrack | null, client: ClientActivity, options: VerdictOptions): GaugeVerdict {
  const pinMs = options.pinAfterS * 1000;
  const windowMs = s.lastMs - s.firstMs;
  const base = {
    target: s.target,
    name: s.name,
    labels: s.labels,
    samples: s.samples,
    window_s: seconds(windowMs),
    longest_nonzero_s: seconds(s.longestMs),
    dips: s.dips,
    last_value: s.lastValue,
  };
  const figures = flowFigures(s, flow, client);
  const verdict = (kind: GaugeVerdictKind, neededS: number | null, evidence: string[]): GaugeVerdict => ({ ...base, verdict: kind, needed_s: neededS, evidence, flow: figures });
  const context = flowSentences(s, figures, flow, client);
  if (s.samples < 2) return verdict('insufficient', options.pinAfterS, [`only ${s.samples} sample${s.samples === 1 ? '' : 's'}: nothing to compare`, ...context]);
  if (s.nonZeroSamples === 0) return verdict('idle', null, [`0 in all ${s.samples} samples over ${fmtS(windowMs)}`, ...context]);

  const judged = s.stretches.map((st) => judgeStretch(st, flow, client, pinMs));
  const longestOf = (kind: StretchKind): Judged | undefined =>
    judged.filter((j) => j.kind === kind).sort((a, b) => b.stretch.lastMs - b.stretch.startMs - (a.stretch.lastMs - a.stretch.startMs))[0];
  const flowName = flow === null ? null : baseName(flow.name);

  const pinned = longestOf('pinned');
  if (pinned !== undefined) {
    const st = pinned.stretch;
    return verdict('pinned', null, [
      `unchanged at ${fmtV(st.value)} for ${fmtS(pinned.gapEndMs - pinned.gapStartMs)} (${fmtS(pinned.gapStartMs)} to ${fmtS(pinned.gapEndMs)} into the run) with nothing flowing: ${flowName === null ? 'no flow counter on this target' : `${flowName} did not move`}, no client request completed, and client requests were in flight ${pct(pinned.inFlight)} of that time`,
      st.end === 'changed' ? `it moved again at last (a stuck request released or cancelled)` : `still at ${fmtV(st.value)} at the last sample`,
      ...context,
    ]);
  }

  const steady = longestOf('steady_flow');
  const staleTail = judged.at(-1)?.kind === 'stale' && judged.at(-1)?.stretch.end !== 'changed' ? judged.at(-1) : undefined;
  if (s.dips > 0 || steady !== undefined) {
    const evidence: string[] = [];
    if (s.dips > 0) evidence.push(`${s.dips} dip${s.dips === 1 ? '' : 's'} over ${fmtS(windowMs)}; non-zero and unchanged ${fmtS(s.longestMs)} at most`);
    if (steady !== undefined) {
      const st = steady.stretch;
      evidence.push(
        `steady at ${fmtV(st.value)} for ${fmtS(st.lastMs - st.startMs)} while work flowed through it: ${steady.counterMoves > 0 && flowName !== null ? `${flowName} moved` : 'the flow counter did not move'}, ${steady.completions} client request${steady.completions === 1 ? '' : 's'} completed, never ${fmtS(pinMs)} without flow`,
      );
    }
    if (s.zerosAfterNonZero === 0 && s.firstNonZeroMs !== null && s.lastMs - s.firstNonZeroMs >= pinMs) {
      evidence.push(`never back to 0 in ${fmtS(s.lastMs - s.firstNonZeroMs)} (lowest ${fmtV(s.minAfterNonZero)}): a request may be stuck under the rotating load`);
    }
    if (staleTail !== undefined) evidence.push(staleSentence(staleTail, flowName, 'ended'));
    return verdict('rotating', null, [...evidence, ...context]);
  }

  const stale = longestOf('stale');
  const undecided = longestOf('undecided');
  if (stale !== undefined && undecided === undefined) return verdict('stale', null, [staleSentence(stale, flowName, 'was'), ...context]);

  // No dip, and no stretch long enough to call a pin or steady flow: say how long a window would tell. The
  // stretch that matters is the last one when it is still undecided (a longer window extends it).
  const last = judged.at(-1);
  const open = last?.kind === 'undecided' ? last : (undecided ?? stale ?? last);
  const startMs = open?.stretch.startMs ?? s.firstMs;
  const neededS = Math.ceil((startMs - s.firstMs + pinMs) / 1000);
  const lengthMs = open === undefined ? 0 : open.stretch.lastMs - open.stretch.startMs;
  const rises = s.changes - s.dips;
  const seen =
    rises > (s.firstNonZeroMs === null ? 0 : 1)
      ? `rose ${rises} times and never dropped in ${fmtS(windowMs)}, unchanged ${fmtS(s.longestMs)} at most (now ${fmtV(s.lastValue)} for ${fmtS(lengthMs)})`
      : `unchanged at ${fmtV(open?.stretch.value ?? s.lastValue)} for ${fmtS(lengthMs)} with no dip seen`;
  return verdict('insufficient', neededS, [
    `${seen}: a gauge that has not dipped tells a pin from rotating load only after ${fmtS(pinMs)} unchanged; a window of about ${neededS} s (the first ${fmtS(startMs - s.firstMs)} plus ${fmtS(pinMs)}) would tell`,
    ...context,
  ]);
}

function judgeStretch(st: Stretch, flow: CounterTrack | null, client: ClientActivity, pinMs: number): Judged {
  const a = st.startMs;
  const b = st.lastMs;
  const pieces: [number, number][] = [];
  let counterMoves = 0;
  if (flow !== null) {
    const m = flow.moved;
    for (let i = 0; i < m.length; i += 2) {
      const p = m[i]!;
      const q = m[i + 1]!;
      if (q <= a || p >= b) continue;
      counterMoves += 1;
      pieces.push([Math.max(p, a), Math.min(q, b)]);
    }
  }
  const ends = client.okEnds();
  let completions = 0;
  for (let i = firstAbove(ends, a); i < ends.length && ends[i]! <= b; i += 1) {
    completions += 1;
    pieces.push([ends[i]!, ends[i]!]);
  }
  pieces.sort((x, y) => x[0] - y[0]);
  let cursor = a;
  let gapStart = a;
  let gapEnd = a;
  for (const [ps, pe] of pieces) {
    if (ps - cursor > gapEnd - gapStart) {
      gapStart = cursor;
      gapEnd = ps;
    }
    cursor = Math.max(cursor, pe);
  }
  if (b - cursor > gapEnd - gapStart) {
    gapStart = cursor;
    gapEnd = b;
  }
  const gapMs = gapEnd - gapStart;
  const judged = { stretch: st, gapStartMs: gapStart, gapEndMs: gapEnd, completions, counterMoves };
  if (gapMs >= pinMs) {
    const inFlight = client.coverage(gapStart, gapEnd);
    return { ...judged, inFlight, kind: inFlight >= PIN_IN_FLIGHT_SHARE ? 'pinned' : 'stale' };
  }
  if (b - a >= pinMs) return { ...judged, inFlight: client.coverage(a, b), kind: 'steady_flow' };
  const idle = pieces.length === 0 && st.samples >= 2 && client.coverage(a, b) === 0;
  return { ...judged, inFlight: 0, kind: idle ? 'stale' : 'undecided' };
}

function staleSentence(j: Judged, flowName: string | null, tense: 'was' | 'ended'): string {
  const st = j.stretch;
  const what = tense === 'ended' ? `ended at ${fmtV(st.value)}, unchanged for ${fmtS(j.gapEndMs - j.gapStartMs)}` : `unchanged at ${fmtV(st.value)} for ${fmtS(j.gapEndMs - j.gapStartMs)}`;
  const counters = flowName === null ? 'no flow counter on this target' : `${flowName} did not move`;
  const busy = j.inFlight === 0 ? 'no client request was in flight' : `client requests were in flight only ${pct(j.inFlight)} of it`;
  return `${what} while ${busy} and ${counters}: a stale reading of an idle engine (SGLang refreshes scheduler gauges only when it logs stats), not a pinned request`;
}

/** The window's flow evidence as figures. */
function flowFigures(s: GaugeSeries, flow: CounterTrack | null, client: ClientActivity): GaugeFlow {
  return {
    counter: flow === null ? null : baseName(flow.name),
    counter_moved_intervals: flow?.movedIntervals ?? 0,
    intervals: flow?.intervals ?? 0,
    completions: client.completionsIn(s.firstMs, s.lastMs),
    in_flight_share: Math.round(client.coverage(s.firstMs, s.lastMs) * 1000) / 1000,
  };
}

/** The window's flow evidence as sentences, shared by every verdict of a series. */
function flowSentences(s: GaugeSeries, f: GaugeFlow, flow: CounterTrack | null, client: ClientActivity): string[] {
  const out: string[] = [];
  if (flow === null) out.push(`no flow counter (generation_tokens_total, prompt_tokens_total, num_requests_total) on ${s.target}: judged by client completions only`);
  else out.push(`${f.counter} moved in ${f.counter_moved_intervals} of ${f.intervals} scrape intervals (+${fmtV(flow.increase)} over the run)`);
  if (client.size > 0) out.push(`${f.completions} client request${f.completions === 1 ? '' : 's'} completed in the window; requests in flight ${pct(f.in_flight_share)} of it`);
  else out.push('no client requests recorded');
  return out;
}

function firstAbove(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

export function fmtS(ms: number): string {
  const s = ms / 1000;
  return s < 100 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

function fmtV(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
}

function pct(share: number): string {
  return `${Math.round(share * 100)}%`;
}

// The call on each gauge series: idle, rotating, pinned, pinned_under_load (a floor held under load), stale,
// insufficient (too short a window to tell), or ratio (a ratio or rate gauge, never pinned). Pure: folded
// scrapes and the client's requests in, verdicts out. A gauge is never judged alone: a steady value is read
// together with the target's own flow counter and with the client's completions and streaming tokens — unless
// the target's counter shows those went elsewhere.
import { baseName, type GaugeFloor, type GaugeFlow, type GaugeVerdict, type GaugeVerdictKind, type HangInfo, type ScrapeEvent, type TargetDown } from '../types/index.js';
import { ClientActivity, flowCounter, GaugeStore, labelKey, type CounterTrack, type GaugeSeries, type Stretch, type TargetTrack } from './series.js';
import { heldFloor, isQueueGauge } from './floor.js';
import { isRatioGauge } from './select.js';
import { partitionPoint, round3 } from '../util/index.js';

export interface VerdictOptions {
  /** Non-zero and unchanged this long with no flow is a pin; a shorter steady stretch tells nothing. */
  pinAfterS: number;
}

/** Share of a no-flow stretch with client requests in flight above which it is a pin, not a stale reading. */
const PIN_IN_FLIGHT_SHARE = 0.5;
/** Client completions inside a stretch (away from its edges by this many scrape intervals) while the
 * target's own counter did not move at all: they went through another server, not this one. */
const DISOWN_COMPLETIONS = 2;
const DISOWN_EDGE_INTERVALS = 2;

/** What a target is judged with: its flow counter, its cadence, when it was down. */
interface TargetFlow {
  counter: CounterTrack | null;
  /** Typical gap between its scrapes (ms). */
  intervalMs: number;
  down: readonly TargetDown[];
}

function targetFlow(t: TargetTrack | undefined): TargetFlow {
  let intervalMs = 1000;
  if (t !== undefined && t.intervals.size > 0) {
    const gaps = [...t.intervals].sort(([a], [b]) => a - b);
    const total = gaps.reduce((n, [, c]) => n + c, 0);
    let seen = 0;
    for (const [gap, count] of gaps) {
      seen += count;
      if (seen * 2 >= total) {
        intervalMs = gap;
        break;
      }
    }
  }
  return { counter: flowCounter(t), intervalMs, down: t?.down ?? [] };
}

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
  /** Share of the stretch with tokens streaming to the client (counted as flow when the client counts). */
  streaming: number;
  /** False: the client's completions went elsewhere (the target's counter stood still through them). */
  clientCounted: boolean;
}

/** Verdicts of every gauge series in `store`, in target, name, labels order. */
export function judgeGauges(store: GaugeStore, client: ClientActivity, options: VerdictOptions): GaugeVerdict[] {
  const out: GaugeVerdict[] = [];
  const series = [...store.series.values()].sort((a, b) => a.target.localeCompare(b.target) || a.name.localeCompare(b.name) || labelKey(a.labels).localeCompare(labelKey(b.labels)));
  for (const s of series) out.push(judgeSeries(s, targetFlow(store.targets.get(s.target)), client, options));
  return out;
}

/** Convenience for tests and rebuilds: scrapes and request records straight to verdicts. */
export function gaugeVerdicts(
  scrapes: Iterable<ScrapeEvent>,
  requests: Iterable<{ run_ms: number; e2e_ms: number; status: string; ttft_ms?: number | null; hang?: HangInfo | null }>,
  options: VerdictOptions,
): GaugeVerdict[] {
  const store = new GaugeStore(options.pinAfterS * 1000);
  for (const e of scrapes) store.add(e);
  const client = new ClientActivity();
  for (const r of requests)
    client.addRecord({ run_ms: r.run_ms, e2e_ms: r.e2e_ms, status: r.status === 'ok' ? 'ok' : r.status === 'hang' ? 'hang' : 'error', ttft_ms: r.ttft_ms ?? null, hang: r.hang ?? null });
  return judgeGauges(store, client, options);
}

export function judgeSeries(s: GaugeSeries, target: TargetFlow, client: ClientActivity, options: VerdictOptions): GaugeVerdict {
  const flow = target.counter;
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
  const judged = s.stretches.map((st) => judgeStretch(st, target, client, pinMs));
  const figures = flowFigures(s, flow, client, judged);
  const verdict = (kind: GaugeVerdictKind, neededS: number | null, evidence: string[], extra: Partial<GaugeVerdict> = {}): GaugeVerdict => ({
    ...base,
    verdict: kind,
    needed_s: neededS,
    evidence,
    flow: figures,
    ...extra,
  });
  const context = [...flowSentences(s, figures, flow, client), ...downSentences(s, target.down)];
  if (s.samples < 2) return verdict('insufficient', options.pinAfterS, [`only ${s.samples} sample${s.samples === 1 ? '' : 's'}: nothing to compare`, ...context]);
  if (s.nonZeroSamples === 0) return verdict('idle', null, [`0 in all ${s.samples} samples over ${fmtS(windowMs)}`, ...context]);
  if (isRatioGauge(s.name)) {
    return verdict('ratio', null, [
      `a ratio or rate, not a count of requests: it holds still under steady load as well as when stuck, so it is not judged for pins (last ${fmtV(s.lastValue)}, unchanged ${fmtS(s.longestMs)} at most, ${s.dips} dip${s.dips === 1 ? '' : 's'})`,
      ...context,
    ]);
  }

  const longestOf = (kind: StretchKind): Judged | undefined => judged.filter((j) => j.kind === kind).sort((a, b) => b.stretch.lastMs - b.stretch.startMs - (a.stretch.lastMs - a.stretch.startMs))[0];
  const flowName = flow === null ? null : baseName(flow.name);

  const pinned = longestOf('pinned');
  if (pinned !== undefined) {
    const st = pinned.stretch;
    const client = pinned.clientCounted
      ? 'no client request completed and no token streamed'
      : `${pinned.completions} client requests completed meanwhile, but through another server (this target's own counter did not count them)`;
    const tail =
      st.end === 'changed'
        ? 'it moved again at last (a stuck request released or cancelled)'
        : st.end === 'unobserved'
          ? 'then the target stopped answering scrapes (see below)'
          : `still at ${fmtV(st.value)} at the last sample`;
    return verdict(
      'pinned',
      null,
      [
        `unchanged at ${fmtV(st.value)} for ${fmtS(pinned.gapEndMs - pinned.gapStartMs)} (${fmtS(pinned.gapStartMs)} to ${fmtS(pinned.gapEndMs)} into the run) with nothing flowing: ${flowName === null ? 'no flow counter on this target' : `${flowName} did not move`}, ${client}, and client requests were in flight ${pct(pinned.inFlight)} of that time`,
        tail,
        ...context,
      ],
      { stuck: { from_ms: Math.round(pinned.gapStartMs), to_ms: Math.round(pinned.gapEndMs) } },
    );
  }

  // Floors are judged on queue gauges only: a running batch or a token count has a floor under any load.
  const floor = isQueueGauge(s.name) ? heldFloor(s, client, pinMs, target.intervalMs) : null;
  if (floor !== null && floor.requests.length > 0) {
    return verdict('pinned_under_load', null, [floorSentence(floor, s), matchSentence(floor), ...context], {
      floor,
      stuck: { from_ms: floor.from_ms, to_ms: floor.to_ms ?? Math.round(s.lastMs) },
    });
  }

  const steady = longestOf('steady_flow');
  const staleTail = judged.at(-1)?.kind === 'stale' && judged.at(-1)?.stretch.end !== 'changed' ? judged.at(-1) : undefined;
  if (s.dips > 0 || steady !== undefined) {
    const evidence: string[] = [];
    // A floor with the value rotating above it: a caveat (nothing of this run matches the step). A value
    // held at the floor with work flowing is the incident's steady 1: rotating load, said as before.
    const caveat = floor !== null && floor.returns >= 1 ? floor : null;
    if (caveat !== null) evidence.push(floorSentence(caveat, s), 'no failed or slow request of this run matches the step: a request of another client, or load that never drained');
    else if (s.dips > 0) evidence.push(`${s.dips} dip${s.dips === 1 ? '' : 's'} over ${fmtS(windowMs)}; non-zero and unchanged ${fmtS(s.longestMs)} at most`);
    if (steady !== undefined) {
      const st = steady.stretch;
      const streamed = steady.streaming > 0 ? `, tokens streamed to the client ${pct(steady.streaming)} of it` : '';
      evidence.push(
        `steady at ${fmtV(st.value)} for ${fmtS(st.lastMs - st.startMs)} while work flowed through it: ${steady.counterMoves > 0 && flowName !== null ? `${flowName} moved` : 'the flow counter did not move'}, ${steady.completions} client request${steady.completions === 1 ? '' : 's'} completed${streamed}, never ${fmtS(pinMs)} without flow`,
      );
    }
    if (caveat === null && s.zerosAfterNonZero === 0 && s.firstNonZeroMs !== null && s.lastMs - s.firstNonZeroMs >= pinMs) {
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

function judgeStretch(st: Stretch, target: TargetFlow, client: ClientActivity, pinMs: number): Judged {
  const a = st.startMs;
  const b = st.lastMs;
  const flow = target.counter;
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
  // The client's completions and tokens count for this target unless its own counter shows they went
  // elsewhere: several completed well inside the stretch while the counter never moved.
  const edge = DISOWN_EDGE_INTERVALS * target.intervalMs;
  const inside = b - a > 2 * edge ? client.completionsIn(a + edge, b - edge) : 0;
  const clientCounted = flow === null || counterMoves > 0 || inside < DISOWN_COMPLETIONS;
  const ends = client.okEnds();
  let completions = 0;
  for (let i = firstAbove(ends, a); i < ends.length && ends[i]! <= b; i += 1) {
    completions += 1;
    if (clientCounted) pieces.push([ends[i]!, ends[i]!]);
  }
  const streaming = client.streamingCoverage(a, b);
  if (clientCounted && streaming > 0) for (const run of client.streamingRuns(a, b)) pieces.push(run);
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
  const judged = { stretch: st, gapStartMs: gapStart, gapEndMs: gapEnd, completions, counterMoves, streaming, clientCounted };
  if (gapMs >= pinMs) {
    const inFlight = client.coverage(gapStart, gapEnd);
    return { ...judged, inFlight, kind: inFlight >= PIN_IN_FLIGHT_SHARE ? 'pinned' : 'stale' };
  }
  if (b - a >= pinMs) return { ...judged, inFlight: client.coverage(a, b), kind: 'steady_flow' };
  const idle = pieces.length === 0 && st.samples >= 2 && client.coverage(a, b) === 0;
  return { ...judged, inFlight: 0, kind: idle ? 'stale' : 'undecided' };
}

/** The floor told as such: where it stepped from and to, how long it held, how the value rotated above it. */
function floorSentence(f: GaugeFloor, s: GaugeSeries): string {
  const held =
    f.to_ms === null
      ? `never below ${f.level} since ${fmtS(f.from_ms)} (${f.held_s.toFixed(1)} s, to the last sample)`
      : `not below ${f.level} from ${fmtS(f.from_ms)} to ${fmtS(f.to_ms)} (${f.held_s.toFixed(1)} s)`;
  const rotation =
    f.above_samples > 0
      ? `while the value rotated above it (${f.returns} return${f.returns === 1 ? '' : 's'} to ${f.level}, above it in ${f.above_samples} samples)`
      : `and held exactly there (${s.samples} samples in the window)`;
  return `floor stepped up from ${f.level - 1} to ${f.level}: ${held} ${rotation}`;
}

function matchSentence(f: GaugeFloor): string {
  const told = f.requests.map((r) => {
    const how = r.status === 'hang' ? `hung${r.phase === null ? '' : ` at ${r.phase}`}` : r.status === 'error' ? 'failed' : 'completed';
    return `a request sent at ${fmtS(r.start_ms)} ${how} at ${fmtS(r.end_ms)}`;
  });
  return `${told.join('; ')}: its life matches the step: one request stuck in this queue while others went through`;
}

function staleSentence(j: Judged, flowName: string | null, tense: 'was' | 'ended'): string {
  const st = j.stretch;
  const what = tense === 'ended' ? `ended at ${fmtV(st.value)}, unchanged for ${fmtS(j.gapEndMs - j.gapStartMs)}` : `unchanged at ${fmtV(st.value)} for ${fmtS(j.gapEndMs - j.gapStartMs)}`;
  const counters = flowName === null ? 'no flow counter on this target' : `${flowName} did not move`;
  const busy = j.inFlight === 0 ? 'no client request was in flight' : `client requests were in flight only ${pct(j.inFlight)} of it`;
  return `${what} while ${busy} and ${counters}: a stale reading of an idle engine (SGLang refreshes scheduler gauges only when it logs stats), not a pinned request`;
}

/** The window's flow evidence as figures. */
function flowFigures(s: GaugeSeries, flow: CounterTrack | null, client: ClientActivity, judged: readonly Judged[]): GaugeFlow {
  return {
    counter: flow === null ? null : baseName(flow.name),
    counter_moved_intervals: flow?.movedIntervals ?? 0,
    intervals: flow?.intervals ?? 0,
    completions: client.completionsIn(s.firstMs, s.lastMs),
    in_flight_share: round3(client.coverage(s.firstMs, s.lastMs)),
    streaming_share: round3(client.streamingCoverage(s.firstMs, s.lastMs)),
    client_counted: judged.every((j) => j.clientCounted),
  };
}

/** The window's flow evidence as sentences, shared by every verdict of a series. */
function flowSentences(s: GaugeSeries, f: GaugeFlow, flow: CounterTrack | null, client: ClientActivity): string[] {
  const out: string[] = [];
  if (flow === null) out.push(`no flow counter (of monitor.counters) on ${s.target}: judged by the client's completions and tokens only`);
  else out.push(`${f.counter} moved in ${f.counter_moved_intervals} of ${f.intervals} scrape intervals (+${fmtV(flow.increase)} over the run)`);
  if (client.size > 0) {
    out.push(
      `${f.completions} client request${f.completions === 1 ? '' : 's'} completed in the window; requests in flight ${pct(f.in_flight_share)} of it, tokens streaming ${pct(f.streaming_share ?? 0)}`,
    );
    if (f.client_counted === false) out.push(`the client's completions were not counted for ${s.target}: they went on while its own ${f.counter} stood still, so they went through another server`);
  } else out.push('no client requests recorded');
  return out;
}

/** When the target stopped answering scrapes over the series' window. */
function downSentences(s: GaugeSeries, down: readonly TargetDown[]): string[] {
  return down
    .filter((d) => d.from_ms >= s.firstMs || (d.to_ms ?? Infinity) >= s.firstMs)
    .slice(0, 5)
    .map(
      (d) =>
        `${s.target} stopped answering scrapes ${d.to_ms === null ? `at ${fmtS(d.from_ms)} and never answered again (` : `from ${fmtS(d.from_ms)} to ${fmtS(d.to_ms)} (`}${d.failed} failed${d.error === null ? '' : `: ${d.error.slice(0, 80)}`})`,
    );
}

function firstAbove(sorted: readonly number[], x: number): number {
  return partitionPoint(sorted, (v) => v <= x);
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

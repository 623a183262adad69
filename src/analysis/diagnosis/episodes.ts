// Failures grouped into episodes: hangs with hangs, errors with errors, each group cut where the failures
// stop for a while. Each episode is then judged on its own (a freeze at 10 s and a proxy crash at 40 s are
// two stories, not one average). Its size and breakdown come from exact tallies, its judging from the spans kept.
import type { ErrorSpan, HangSpan } from './inputs.js';
import { plural, s1 } from './text.js';

export type EpisodeKind = 'hangs' | 'errors';

/** Exact figures of a stretch of failures of one kind, however few of its spans were kept. */
export interface EpisodeTally {
  kind: EpisodeKind;
  from_ms: number;
  to_ms: number;
  count: number;
  /** Counts by what the facts name: hangs by `phase` and `path`, errors by `class`, `status` and `path`. */
  by: Map<string, Map<string, number>>;
  /** Hangs on reused keep-alive connections. */
  reused: number;
}

/** What a long run kept of its failures: exact tallies of every stretch, and how many there were in all. */
export interface KeptFailures {
  /** Every stretch of failures as the collector streamed them (a gap no longer than the judge's). */
  tallies: readonly EpisodeTally[];
  /** Failures of the run (hangs and errors), each counted once. */
  total: number;
  /** Stretches the collector merged into a neighbour when it held its most of one kind. @default 0 */
  merged?: number;
}

export interface Episode {
  kind: EpisodeKind;
  from_ms: number;
  to_ms: number;
  /** The spans the episode is judged on: all of its failures, or those kept of a long run. */
  hangs: HangSpan[];
  errors: ErrorSpan[];
  /** Its exact figures (absent: the spans are all of them). */
  tally?: EpisodeTally;
}

interface Span {
  from_ms: number;
  to_ms: number;
}

function cluster<T extends Span>(spans: readonly T[], gapMs: number): T[][] {
  const sorted = [...spans].sort((a, b) => a.from_ms - b.from_ms);
  const out: T[][] = [];
  let current: T[] = [];
  let end = -Infinity;
  for (const s of sorted) {
    if (current.length > 0 && s.from_ms > end + gapMs) {
      out.push(current);
      current = [];
      end = -Infinity;
    }
    current.push(s);
    end = Math.max(end, s.to_ms);
  }
  if (current.length > 0) out.push(current);
  return out;
}

function add(t: EpisodeTally, key: string, value: string, n: number): void {
  let group = t.by.get(key);
  if (group === undefined) t.by.set(key, (group = new Map<string, number>()));
  group.set(value, (group.get(value) ?? 0) + n);
}

/** A tally of one failure. */
export function newTally(kind: EpisodeKind, s: Span): EpisodeTally {
  return { kind, from_ms: s.from_ms, to_ms: s.to_ms, count: 0, by: new Map(), reused: 0 };
}

export function tallyHang(t: EpisodeTally, h: HangSpan): void {
  t.from_ms = Math.min(t.from_ms, h.from_ms);
  t.to_ms = Math.max(t.to_ms, h.to_ms);
  t.count += 1;
  add(t, 'phase', h.phase ?? 'unknown', 1);
  add(t, 'path', h.path, 1);
  if (h.nth !== null && h.nth >= 2) t.reused += 1;
}

export function tallyError(t: EpisodeTally, e: ErrorSpan): void {
  t.from_ms = Math.min(t.from_ms, e.from_ms);
  t.to_ms = Math.max(t.to_ms, e.to_ms);
  t.count += 1;
  add(t, 'class', e.class, 1);
  if (e.http_status !== null) add(t, 'status', String(e.http_status), 1);
  add(t, 'path', e.path, 1);
}

/** `b` added into `a`. */
export function mergeTally(a: EpisodeTally, b: EpisodeTally): void {
  a.from_ms = Math.min(a.from_ms, b.from_ms);
  a.to_ms = Math.max(a.to_ms, b.to_ms);
  a.count += b.count;
  a.reused += b.reused;
  for (const [key, group] of b.by) for (const [value, n] of group) add(a, key, value, n);
}

function tallyOf(ep: Episode): EpisodeTally {
  if (ep.tally !== undefined) return ep.tally;
  const t = newTally(ep.kind, ep);
  for (const h of ep.hangs) tallyHang(t, h);
  for (const e of ep.errors) tallyError(t, e);
  return t;
}

/** How many requests failed in the episode: exact, not the spans kept. */
export function episodeSize(ep: Episode): number {
  return ep.tally?.count ?? ep.hangs.length + ep.errors.length;
}

/** `headers 3, mid_stream 1` from a tally's group, most frequent first. */
function groupText(t: EpisodeTally, key: string): string {
  return [...(t.by.get(key) ?? [])]
    .sort(([, a], [, b]) => b - a)
    .map(([value, n]) => `${value} ${n}`)
    .join(', ');
}

/** The episode's first fact: how many failed when, by phase or class, status and path (exact counts). */
export function episodeFacts(ep: Episode): string[] {
  const t = tallyOf(ep);
  const span = `from ${s1(ep.from_ms)} to ${s1(ep.to_ms)}`;
  if (ep.kind === 'hangs') {
    return [`${plural(t.count, 'request')} hung ${span} of the run (by phase: ${groupText(t, 'phase')}; by path: ${groupText(t, 'path')}); ${t.reused} of them on reused keep-alive connections`];
  }
  return [
    `${plural(t.count, 'request')} failed ${span} of the run (by class: ${groupText(t, 'class')}${t.by.has('status') ? `; HTTP ${groupText(t, 'status')}` : ''}; by path: ${groupText(t, 'path')})`,
  ];
}

/** Said when the spans are a sample of the run's failures, else null. */
export function keptText(spans: number, kept: KeptFailures | null | undefined): string | null {
  if (kept === null || kept === undefined || kept.total <= spans) return null;
  const merged = kept.merged ?? 0;
  return `judged from ${spans} of ${kept.total} failures: a sample across the run plus the first and last of each episode${
    merged > 0 ? ` (${plural(merged, 'stretch', 'stretches')} merged into their nearest neighbour, past the most kept apart; counts exact)` : ''
  }`;
}

function fromSpans(hangs: readonly HangSpan[], errors: readonly ErrorSpan[], gapMs: number): Episode[] {
  const out: Episode[] = [];
  for (const group of cluster(hangs, gapMs)) {
    out.push({ kind: 'hangs', from_ms: Math.min(...group.map((h) => h.from_ms)), to_ms: Math.max(...group.map((h) => h.to_ms)), hangs: group, errors: [] });
  }
  for (const group of cluster(errors, gapMs)) {
    out.push({ kind: 'errors', from_ms: Math.min(...group.map((e) => e.from_ms)), to_ms: Math.max(...group.map((e) => e.to_ms)), hangs: [], errors: group });
  }
  return out;
}

/** The tallies of one kind clustered at `gapMs`, each cluster one tally, in time order. */
function clustered(tallies: readonly EpisodeTally[], kind: EpisodeKind, gapMs: number): EpisodeTally[] {
  return cluster(
    tallies.filter((t) => t.kind === kind),
    gapMs,
  ).map((group) => {
    const into = newTally(kind, group[0]!);
    for (const t of group) mergeTally(into, t);
    return into;
  });
}

/** Each span given to the episode whose stretch holds its start (the last one starting before it). */
function assign<T extends Span>(spans: readonly T[], stretches: readonly EpisodeTally[]): T[][] {
  const out = stretches.map((): T[] => []);
  if (out.length === 0) return out;
  for (const s of [...spans].sort((a, b) => a.from_ms - b.from_ms)) {
    let lo = 0;
    let hi = stretches.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (stretches[mid]!.from_ms <= s.from_ms) lo = mid;
      else hi = mid - 1;
    }
    out[lo]!.push(s);
  }
  return out;
}

/** Built from exact tallies: each episode's stretch and counts from them, its spans those kept in it. */
function fromTallies(hangs: readonly HangSpan[], errors: readonly ErrorSpan[], tallies: readonly EpisodeTally[], gapMs: number): Episode[] {
  const hangStretches = clustered(tallies, 'hangs', gapMs);
  const errorStretches = clustered(tallies, 'errors', gapMs);
  const hangGroups = assign(hangs, hangStretches);
  const errorGroups = assign(errors, errorStretches);
  return [
    ...hangStretches.map((t, i): Episode => ({ kind: 'hangs', from_ms: t.from_ms, to_ms: t.to_ms, hangs: hangGroups[i]!, errors: [], tally: t })),
    ...errorStretches.map((t, i): Episode => ({ kind: 'errors', from_ms: t.from_ms, to_ms: t.to_ms, hangs: [], errors: errorGroups[i]!, tally: t })),
  ];
}

/**
 * Episodes in time order; failures closer than `gapMs` to the previous ones of their kind join them. With
 * `tallies` (a long run's exact stretches, streamed at a gap no longer than `gapMs`), the episodes are those
 * stretches clustered at `gapMs`, and the spans are what was kept of them.
 */
export function episodesOf(hangs: readonly HangSpan[], errors: readonly ErrorSpan[], gapMs: number, tallies?: readonly EpisodeTally[]): Episode[] {
  const out = tallies === undefined || tallies.length === 0 ? fromSpans(hangs, errors, gapMs) : fromTallies(hangs, errors, tallies, gapMs);
  return out.sort((a, b) => a.from_ms - b.from_ms || (a.kind === 'hangs' ? -1 : 1));
}

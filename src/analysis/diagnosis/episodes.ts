// Failures grouped into episodes: hangs with hangs, errors with errors, each group cut where the failures
// stop for a while. Each episode is then judged on its own (a freeze at 10 s and a proxy crash at 40 s are
// two stories, not one average).
import type { ErrorSpan, HangSpan } from './inputs.js';

export interface Episode {
  kind: 'hangs' | 'errors';
  from_ms: number;
  to_ms: number;
  hangs: HangSpan[];
  errors: ErrorSpan[];
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

/** Episodes in time order; failures closer than `gapMs` to the previous ones of their kind join them. */
export function episodesOf(hangs: readonly HangSpan[], errors: readonly ErrorSpan[], gapMs: number): Episode[] {
  const out: Episode[] = [];
  for (const group of cluster(hangs, gapMs)) {
    out.push({ kind: 'hangs', from_ms: Math.min(...group.map((h) => h.from_ms)), to_ms: Math.max(...group.map((h) => h.to_ms)), hangs: group, errors: [] });
  }
  for (const group of cluster(errors, gapMs)) {
    out.push({ kind: 'errors', from_ms: Math.min(...group.map((e) => e.from_ms)), to_ms: Math.max(...group.map((e) => e.to_ms)), hangs: [], errors: group });
  }
  return out.sort((a, b) => a.from_ms - b.from_ms || (a.kind === 'hangs' ? -1 : 1));
}

// The idle keep-alive timeout of a path: after one request, does a connection left idle for a gap carry the
// next request, or did the server (or a proxy) close it? Gaps doubling up to the limit are tried at once, each
// on a fresh connection, then the interval between the longest kept and the shortest closed gap is split in
// rounds until it is narrow enough or the time bound (2 × the limit) would be passed.
import { TargetUnreachableError } from '../errors.js';
import { failure, type PathClient, type Exchange } from './exchange.js';

export type GapOutcome = 'kept' | 'closed';

export interface IdleResult {
  /** `closes`: some gap was closed; `kept`: every gap up to the limit carried the next request. */
  kind: 'closes' | 'kept';
  /** The longest gap that was kept below the shortest closed one (0 when even the first was closed). */
  keptMs: number;
  /** The shortest gap that was closed, or null. */
  closedMs: number | null;
  /** The midpoint of the interval, or null when nothing closed. */
  estimateMs: number | null;
  maxIdleMs: number;
  /** The server's `Keep-Alive` header on the first answer, if it sent one (a hint it may not keep). */
  keepAliveHeader: string | null;
  tried: { gapMs: number; outcome: GapOutcome }[];
  elapsedMs: number;
}

export interface IdleDeps {
  /** Opens a connection, makes one request, waits `gapMs`, makes another: was the connection kept? */
  tryGap(gapMs: number): Promise<GapOutcome>;
  nowMs(): number;
  onProgress(line: string): void;
  /** The Keep-Alive header seen, once known. */
  keepAliveHeader?: () => string | null;
}

/** 1, 2, 4, … s below `maxIdleMs`, then `maxIdleMs` itself. */
export function doublingGaps(maxIdleMs: number): number[] {
  const gaps: number[] = [];
  for (let g = 1000; g < maxIdleMs; g *= 2) gaps.push(g);
  gaps.push(maxIdleMs);
  return gaps;
}

/** Up to `most` evenly spaced points strictly inside (lo, hi), no closer than `precisionMs`. */
export function pointsBetween(loMs: number, hiMs: number, precisionMs: number, most = 7): number[] {
  const parts = Math.min(most + 1, Math.max(2, Math.ceil((hiMs - loMs) / precisionMs)));
  const step = (hiMs - loMs) / parts;
  return Array.from({ length: parts - 1 }, (_, i) => Math.round(loMs + step * (i + 1)));
}

/** The narrowest (kept, closed) interval the outcomes show: the longest kept gap below the shortest closed one. */
export function bracket(tried: readonly { gapMs: number; outcome: GapOutcome }[]): { keptMs: number; closedMs: number | null } {
  const closed = tried.filter((t) => t.outcome === 'closed').map((t) => t.gapMs);
  const closedMs = closed.length === 0 ? null : Math.min(...closed);
  const kept = tried.filter((t) => t.outcome === 'kept' && (closedMs === null || t.gapMs < closedMs)).map((t) => t.gapMs);
  return { keptMs: kept.length === 0 ? 0 : Math.max(...kept), closedMs };
}

export async function measureIdle(options: { maxIdleMs: number; precisionMs?: number }, deps: IdleDeps): Promise<IdleResult> {
  const precisionMs = options.precisionMs ?? 500;
  const boundMs = 2 * options.maxIdleMs;
  const startedMs = deps.nowMs();
  const tried: { gapMs: number; outcome: GapOutcome }[] = [];
  const round = async (gaps: number[]): Promise<void> => {
    deps.onProgress(`idle: ${gaps.length} connections idle for ${gaps.map((g) => `${(g / 1000).toFixed(1)}`).join(', ')} s`);
    const outcomes = await Promise.all(gaps.map((g) => deps.tryGap(g)));
    gaps.forEach((gapMs, i) => tried.push({ gapMs, outcome: outcomes[i]! }));
  };
  await round(doublingGaps(options.maxIdleMs));
  for (;;) {
    const { keptMs, closedMs } = bracket(tried);
    if (closedMs === null || closedMs - keptMs <= precisionMs) break;
    if (deps.nowMs() - startedMs + closedMs > boundMs) break;
    await round(pointsBetween(keptMs, closedMs, precisionMs));
  }
  const { keptMs, closedMs } = bracket(tried);
  return {
    kind: closedMs === null ? 'kept' : 'closes',
    keptMs,
    closedMs,
    estimateMs: closedMs === null ? null : Math.round((keptMs + closedMs) / 2),
    maxIdleMs: options.maxIdleMs,
    keepAliveHeader: deps.keepAliveHeader?.() ?? null,
    tried: [...tried].sort((a, b) => a.gapMs - b.gapMs),
    elapsedMs: Math.round(deps.nowMs() - startedMs),
  };
}

/**
 * The real gap trial on `client`: GET `path`, wait, GET again. Closed when the second request went out on a
 * new socket (undici saw the close while idle) or failed before an answer (a reset as it was reused).
 */
export function gapTrial(client: PathClient, target: { url: string; path: string }, sleep: (ms: number) => Promise<void>, seen: (x: Exchange) => void): (gapMs: number) => Promise<GapOutcome> {
  const { path } = target;
  return async (gapMs) => {
    const connection = client.connection();
    const first = await connection.send({ method: 'GET', path }, { timeoutMs: 10_000 });
    if (first.status === null || first.connection === null) throw new TargetUnreachableError(target.url, { detail: `the idle check's first request failed (${failure(first)})` });
    seen(first);
    await sleep(gapMs);
    const second = await connection.send({ method: 'GET', path }, { timeoutMs: 10_000 });
    if (second.status === null) return 'closed';
    return second.connection?.id === first.connection.id ? 'kept' : 'closed';
  };
}

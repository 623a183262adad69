// The probe's report as a small table for people: one line per check, its verdict in a sentence.
import type { ProbeReport } from './probe.js';
import type { IdleResult } from './idle.js';
import type { ReadResult } from './read.js';
import type { StreamResult } from './stream.js';
import { formatBytes, type BodyResult } from './body.js';
import { printable } from '../util/index.js';

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The idle timeout as what was measured: a range, the longest gap kept to the shortest closed (its middle,
 * `estimateMs` in the JSON, was never seen). */
export function idleLine(r: IdleResult): string {
  const hint = r.keepAliveHeader === null ? '' : ` (announces Keep-Alive: ${r.keepAliveHeader})`;
  if (r.kind === 'kept' || r.closedMs === null) return `kept idle ≥ ${s(r.maxIdleMs)} (--max-idle)${hint}`;
  if (r.keptMs === 0) return `closes idle connections within ${s(r.closedMs)} (closed after ${s(r.closedMs)} idle, the shortest gap tried)${hint}`;
  return `closes idle connections after ${range(r.keptMs, r.closedMs)} (kept after ${s(r.keptMs)} idle, closed after ${s(r.closedMs)})${hint}`;
}

/** `4.0–8.0 s`. */
function range(loMs: number, hiMs: number): string {
  return `${(loMs / 1000).toFixed(1)}–${s(hiMs)}`;
}

export function readLine(r: ReadResult): string {
  if (r.kind === 'cut') return `cuts a held response at ≈ ${s(r.atMs)} (${r.how})`;
  if (r.kind === 'held') return `held ≥ ${s(r.maxHoldMs)} (--max-hold; ${r.how})`;
  return `no cut seen: the server answered first (${r.how}); held ≥ ${s(r.atMs)}`;
}

export function streamLine(r: StreamResult): string {
  if (r.kind === 'passes') return `streams pass through (first byte at ${Math.round(r.firstByteMs ?? 0)} ms, ${r.events} chunks over ${s(r.spreadMs)})`;
  if (r.kind === 'buffers') return `buffers streams (${r.detail})`;
  return `not judged: ${r.detail}`;
}

/** The largest body as a range too: the largest that went through to the smallest refused. */
export function bodyLine(r: BodyResult): string {
  if (r.kind === 'all') return `the largest tried went through (${formatBytes(r.acceptedBytes ?? 0)})`;
  if (r.kind === 'none') return `refused even ${formatBytes(r.rejectedBytes ?? 0)} (${r.how ?? 'refused'})`;
  const [lo, hi] = [formatBytes(r.acceptedBytes ?? 0), formatBytes(r.rejectedBytes ?? 0)];
  return `takes bodies up to ${lo}–${hi} (${lo} went through, ${hi} refused: ${r.how ?? 'refused'})`;
}

export function formatProbe(probed: ProbeReport): string {
  // What the path answered (its error messages, its headers): one line each, no controls.
  const report = printable(probed);
  const rows: [string, string][] = [
    ['idle', report.idle === null ? 'skipped' : idleLine(report.idle)],
    ['read', report.read === null ? 'skipped' : readLine(report.read)],
    ['stream', report.stream === null ? 'skipped' : streamLine(report.stream)],
    ['body', report.body === null ? 'skipped' : bodyLine(report.body)],
  ];
  const head = `path ${report.url} (${report.path}), model ${report.model}, measured in ${s(report.elapsedMs)}`;
  return [head, ...rows.map(([k, v]) => `  ${k.padEnd(7)}${v}`)].join('\n') + '\n';
}

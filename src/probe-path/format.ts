// The probe's report as a small table for people: one line per check, its verdict in a sentence.
import type { ProbeReport } from './probe.js';
import type { IdleResult } from './idle.js';
import type { ReadResult } from './read.js';
import type { StreamResult } from './stream.js';
import { formatBytes, type BodyResult } from './body.js';
import { printable } from '../util/index.js';

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export function idleLine(r: IdleResult): string {
  const hint = r.keepAliveHeader === null ? '' : ` (announces Keep-Alive: ${r.keepAliveHeader})`;
  if (r.kind === 'kept' || r.closedMs === null) return `kept idle ≥ ${s(r.maxIdleMs)} (--max-idle)${hint}`;
  return `closes idle connections after ≈ ${s(r.estimateMs ?? r.closedMs)} (kept ${s(r.keptMs)}, closed at ${s(r.closedMs)})${hint}`;
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

export function bodyLine(r: BodyResult): string {
  if (r.kind === 'all') return `accepted the largest tried (${formatBytes(r.acceptedBytes ?? 0)})`;
  if (r.kind === 'none') return `refused even ${formatBytes(r.rejectedBytes ?? 0)} (${r.how ?? 'refused'})`;
  return `accepts bodies up to ≈ ${formatBytes(r.acceptedBytes ?? 0)} (${r.how ?? 'refused'} at ${formatBytes(r.rejectedBytes ?? 0)})`;
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

// Test helpers for the export: a run's verdicts, reading a remote-write body back (snappy, then the protobuf WriteRequest, decoded
// by a reader written from the .proto, not from the encoder), and reading one series of a text exposition.
import { uncompress } from 'snappyjs';
import type { RunVerdicts } from '../../src/export/metrics.js';

export interface DecodedSeries {
  labels: [string, string][];
  samples: { value: number; timestampMs: number }[];
}

/** Length-delimited and fixed fields of one protobuf message, in order. */
function fields(buf: Uint8Array): { field: number; wire: number; bytes: Uint8Array; varint: number }[] {
  const out: { field: number; wire: number; bytes: Uint8Array; varint: number }[] = [];
  let at = 0;
  const varint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = buf[at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 128;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ field, wire, bytes: new Uint8Array(), varint: varint() });
    else if (wire === 1) {
      out.push({ field, wire, bytes: buf.subarray(at, at + 8), varint: 0 });
      at += 8;
    } else if (wire === 2) {
      const len = varint();
      out.push({ field, wire, bytes: buf.subarray(at, at + len), varint: 0 });
      at += len;
    } else throw new Error(`unexpected wire type ${wire} at ${at}`);
  }
  return out;
}

const text = new TextDecoder();

/** A WriteRequest's series, from its protobuf bytes. */
export function decodeWriteRequest(buf: Uint8Array): DecodedSeries[] {
  return fields(buf)
    .filter((f) => f.field === 1 && f.wire === 2)
    .map(({ bytes }) => {
      const series: DecodedSeries = { labels: [], samples: [] };
      for (const f of fields(bytes)) {
        if (f.field === 1) {
          const parts = fields(f.bytes);
          series.labels.push([text.decode(parts.find((p) => p.field === 1)!.bytes), text.decode(parts.find((p) => p.field === 2)!.bytes)]);
        } else if (f.field === 2) {
          const parts = fields(f.bytes);
          const v = parts.find((p) => p.field === 1)!.bytes;
          series.samples.push({ value: new DataView(v.buffer, v.byteOffset, 8).getFloat64(0, true), timestampMs: parts.find((p) => p.field === 2)?.varint ?? 0 });
        }
      }
      return series;
    });
}

/** A remote-write POST body (snappy block format) decoded. */
export function decodeBody(body: Buffer): DecodedSeries[] {
  return decodeWriteRequest(uncompress(new Uint8Array(body)));
}

/** The value of one series line of a text exposition, e.g. `roundload_requests_total{phase="main",status="ok"}`,
 * the `workload` label left out of the comparison. */
export function exposed(exposition: string, series: string): number | undefined {
  for (const line of exposition.split('\n')) {
    const at = line.lastIndexOf(' ');
    if (at <= 0 || line.startsWith('#')) continue;
    const name = line
      .slice(0, at)
      .replace(/,?workload="[^"]*"/, '')
      .replace('{,', '{')
      .replace(/\{\}$/, '');
    if (name === series) return Number(line.slice(at + 1));
  }
  return undefined;
}

/** A run's end as the summary tells it: one pinned gauge, an engine diagnosis, one failed threshold. */
export const VERDICTS: RunVerdicts = {
  run: { name: 'm', status: 'completed', started_at: null, ended_at: null, wall_s: 1, target: 'x', path: 'direct', labels: {} },
  gauges: [
    {
      target: 'decode',
      name: 'sglang:num_running_reqs',
      labels: { worker: 'd0' },
      verdict: 'pinned',
      samples: 40,
      window_s: 40,
      longest_nonzero_s: 30,
      dips: 0,
      last_value: 1,
      needed_s: null,
      evidence: [],
    },
    { target: 'router', name: 'sglang:num_queue_reqs', labels: {}, verdict: 'rotating', samples: 40, window_s: 40, longest_nonzero_s: 2, dips: 9, last_value: 0, needed_s: null, evidence: [] },
  ],
  diagnosis: { verdict: 'engine', confidence: 0.8, evidence: [] },
  thresholds: {
    ok: false,
    results: [
      { name: 'hangs', limit: 0, actual: 1, ok: false, message: '' },
      { name: 'error_rate', limit: 0.01, actual: 0.25, ok: false, message: '' },
      { name: 'ok_requests', limit: 1, actual: 2, ok: true, message: '' },
    ],
  },
};

/** The PromQL of every panel of a Grafana dashboard. */
export function dashboardQueries(dashboard: { panels: { targets?: { expr: string }[] }[] }): string[] {
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

// Pushes series to a Prometheus remote-write 1.0 endpoint (Prometheus with --web.enable-remote-write-receiver,
// Mimir, Thanos receive, VictoriaMetrics, Grafana Cloud): one POST of a snappy-compressed protobuf
// WriteRequest, bounded in time. Credentials in the URL become Basic authentication (fetch refuses them in a URL).
import { encodeWriteRequest, type TimeSeries } from './protobuf.js';

export interface RemoteWriteResult {
  series: number;
  samples: number;
  /** Compressed body size. */
  bytes: number;
}

/** Throws what went wrong (network, timeout, a status other than 2xx with the first line of its body). */
export async function pushRemoteWrite(url: string, series: readonly TimeSeries[], options: { timeoutMs: number }): Promise<RemoteWriteResult> {
  // Loaded here, on demand: a run that pushes nothing never loads it.
  const { compress } = await import('snappyjs');
  const body = compress(encodeWriteRequest(series));
  const target = new URL(url);
  const headers: Record<string, string> = {
    'content-encoding': 'snappy',
    'content-type': 'application/x-protobuf',
    'user-agent': 'roundload',
    'x-prometheus-remote-write-version': '0.1.0',
  };
  if (target.username !== '' || target.password !== '') {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  const res = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(options.timeoutMs) });
  const text = await res.text();
  if (!res.ok) throw new Error(`HTTP ${res.status}${text.trim() === '' ? '' : `: ${text.trim().split('\n')[0]!.slice(0, 300)}`}`);
  return { series: series.length, samples: series.reduce((n, s) => n + s.samples.length, 0), bytes: body.length };
}

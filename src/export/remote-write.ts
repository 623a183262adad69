// Pushes series to a Prometheus remote-write 1.0 endpoint (Prometheus with --web.enable-remote-write-receiver,
// Mimir, Thanos receive, VictoriaMetrics, Grafana Cloud): one POST of a snappy-compressed protobuf
// WriteRequest, bounded in time. Credentials in the URL become Basic authentication (fetch refuses them in a URL).
import { RemoteWriteError } from '../errors.js';
import { encodeWriteRequest, type TimeSeries } from './protobuf.js';

export interface RemoteWriteResult {
  series: number;
  samples: number;
  /** Compressed body size. */
  bytes: number;
}

export interface PushOptions {
  /** The push is given up after this long. */
  timeoutMs: number;
  /** Gives the push up earlier (the end of the run's bound). */
  signal?: AbortSignal;
}

/** @throws RemoteWriteError what went wrong: unreachable, no answer within `timeoutMs`, a status other than 2xx
 * (with the first line of its body); `retryable` unless the receiver said never to send it again (a 4xx but 429). */
export async function pushRemoteWrite(url: string, series: readonly TimeSeries[], options: PushOptions): Promise<RemoteWriteResult> {
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
  const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(options.timeoutMs)));
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let status: number;
  let text: string;
  try {
    const res = await fetch(target, { method: 'POST', headers, body, signal });
    status = res.status;
    text = await res.text();
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    const why = timeout.aborted
      ? `no answer within ${Math.round(options.timeoutMs) / 1000} s`
      : options.signal?.aborted === true
        ? 'given up at the end of the run'
        : `${error instanceof Error ? error.message : String(error)}${cause}`;
    throw new RemoteWriteError(why, { retryable: true, cause: error });
  }
  if (status < 200 || status > 299) {
    const line = text.trim() === '' ? '' : `: ${text.trim().split('\n')[0]!.slice(0, 300)}`;
    throw new RemoteWriteError(`HTTP ${status}${line}`, { status, retryable: status >= 500 || status === 429 });
  }
  return { series: series.length, samples: series.reduce((n, s) => n + s.samples.length, 0), bytes: body.length };
}

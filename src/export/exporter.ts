// roundload's own metrics for Prometheus (`client_metrics:`, `--metrics-port`, `--remote-write`): built from
// the run's events, served at /metrics while the run goes and pushed by remote write every interval, and at
// its end given the run's verdicts, pushed a last time, served a bounded while longer for a last scrape
// (`linger_s`), then closed. prom-client is loaded only when a run asks for any of it: start-up stays fast.
import { hostname } from 'node:os';
import type { RunEvent } from '../types/index.js';
import { RunMetrics, type RunMetricsOptions, type RunVerdicts } from './metrics.js';
import { serveMetrics, type MetricsServer } from './server.js';
import { RemoteWriter, type RemoteWriteLimits } from './remote-writer.js';

/** The workload's `client_metrics:` section, as far as export reads it. */
export interface MetricsExportSettings {
  /** Serve /metrics on this port (0: any free one); null: no endpoint. */
  port: number | null;
  host: string;
  /** After the run, keep /metrics up this long for a last scrape. */
  linger_s: number;
  /** Push the run's series here while it goes and at its end; null: no push. */
  remote_write_url: string | null;
  /** One push is given up after this long; so is the end's last push and flush. */
  remote_write_timeout_s: number;
  /** Time between pushes while the run goes. */
  remote_write_interval_s: number;
}

export interface MetricsExportOptions extends RunMetricsOptions {
  settings: MetricsExportSettings;
  /** Notices and warnings (stderr). */
  log: (line: string) => void;
  /** Aborted: the linger ends at once (the user stopped the run). */
  signal?: AbortSignal;
  /** Bounds of the remote-write queue (tests make them small). */
  remoteWriteLimits?: Partial<RemoteWriteLimits>;
}

export interface MetricsExport {
  /** `http://127.0.0.1:PORT/metrics`, or null without an endpoint. */
  readonly url: string | null;
  /** Subscribe the run's events here. Never throws. */
  onEvent(event: RunEvent): void;
  /** The run is over: verdicts as gauges, the push, the linger, then the close. Never throws. */
  finish(summary: RunVerdicts): Promise<void>;
  /** Closes at once (a run that failed before its summary); idempotent. */
  close(): Promise<void>;
}

/** Starts the export. @throws ServerStartError when the port asked for cannot be listened on. */
export async function startMetricsExport(o: MetricsExportOptions): Promise<MetricsExport> {
  const { settings, log } = o;
  const prom = await import('prom-client');
  const metrics = new RunMetrics(prom, o);
  const server: MetricsServer | null = settings.port === null ? null : await serveMetrics({ host: settings.host, port: settings.port, registry: metrics.registry });
  if (server !== null) log(`client metrics on ${server.url}`);
  const writer =
    settings.remote_write_url === null
      ? null
      : new RemoteWriter({
          url: settings.remote_write_url,
          intervalMs: settings.remote_write_interval_s * 1000,
          timeoutMs: settings.remote_write_timeout_s * 1000,
          read: () => metrics.registry.getMetricsAsJSON(),
          extraLabels: { job: 'roundload', instance: hostname() },
          log,
          ...(o.remoteWriteLimits === undefined ? {} : { limits: o.remoteWriteLimits }),
        });
  await writer?.start();
  let closed = false;
  const close = async (): Promise<void> => {
    closed = true;
    writer?.close();
    await server?.close();
  };
  return {
    url: server?.url ?? null,
    onEvent(event) {
      if (!closed) metrics.onEvent(event);
    },
    async finish(summary) {
      if (closed) return;
      metrics.finish(summary);
      await writer?.finish();
      if (server !== null && settings.linger_s > 0 && o.signal?.aborted !== true) {
        log(`client metrics: serving the final values for ${settings.linger_s} s more on ${server.url} (linger_s)`);
        await linger(settings.linger_s * 1000, o.signal);
      }
      await close();
    },
    close,
  };
}

/** Waits `ms`, or until `signal` aborts. */
function linger(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

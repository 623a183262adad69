// roundload's own metrics for Prometheus (`client_metrics:`, `--metrics-port`, `--remote-write`): built from
// the run's events, served at /metrics while the run goes, and at its end given the run's verdicts, pushed
// by remote write (for jobs too short to be scraped), served a bounded while longer for a last scrape
// (`linger_s`), then closed. prom-client is loaded only when a run asks for any of it: start-up stays fast.
import { hostname } from 'node:os';
import type { RunEvent } from '../types/index.js';
import { redactUrlCredentials } from '../util/index.js';
import { RunMetrics, type RunMetricsOptions, type RunVerdicts } from './metrics.js';
import { SeriesRecorder } from './series.js';
import { serveMetrics, type MetricsServer } from './server.js';
import { pushRemoteWrite } from './remote-write.js';

/** The workload's `client_metrics:` section, as far as export reads it. */
export interface MetricsExportSettings {
  /** Serve /metrics on this port (0: any free one); null: no endpoint. */
  port: number | null;
  host: string;
  /** After the run, keep /metrics up this long for a last scrape. */
  linger_s: number;
  /** Push the run's series here at its end; null: no push. */
  remote_write_url: string | null;
  remote_write_timeout_s: number;
}

export interface MetricsExportOptions extends RunMetricsOptions {
  settings: MetricsExportSettings;
  /** Notices and warnings (stderr). */
  log: (line: string) => void;
  /** Aborted: the linger ends at once (the user stopped the run). */
  signal?: AbortSignal;
  /** Time between the snapshots pushed by remote write. @default 10000 */
  snapshotIntervalMs?: number;
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
  const recorder =
    settings.remote_write_url === null
      ? null
      : new SeriesRecorder({ extraLabels: { job: 'roundload', instance: hostname() }, ...(o.snapshotIntervalMs === undefined ? {} : { intervalMs: o.snapshotIntervalMs }) });
  // One snapshot at a time, each stamped once its values are read: a series' samples stay in time order
  // (Prometheus refuses a whole push over one sample out of order).
  let snapshotting: Promise<void> = Promise.resolve();
  const snapshot = (): Promise<void> => {
    if (recorder === null) return snapshotting;
    snapshotting = snapshotting.then(async () => {
      const families = await metrics.registry.getMetricsAsJSON();
      recorder.add(families, Date.now());
    });
    return snapshotting;
  };
  await snapshot();
  const snapshots =
    recorder === null
      ? null
      : setInterval(
          () => {
            if (recorder.due(Date.now())) void snapshot();
          },
          Math.min(o.snapshotIntervalMs ?? 10_000, 1000),
        ).unref();
  let closed = false;
  const close = async (): Promise<void> => {
    closed = true;
    if (snapshots !== null) clearInterval(snapshots);
    await server?.close();
  };
  return {
    url: server?.url ?? null,
    onEvent(event) {
      if (!closed) metrics.onEvent(event);
    },
    async finish(summary) {
      if (closed) return;
      if (snapshots !== null) clearInterval(snapshots);
      metrics.finish(summary);
      if (recorder !== null && settings.remote_write_url !== null) {
        await snapshot();
        await push(settings.remote_write_url, recorder, settings.remote_write_timeout_s * 1000, log);
      }
      if (server !== null && settings.linger_s > 0 && o.signal?.aborted !== true) {
        log(`client metrics: serving the final values for ${settings.linger_s} s more on ${server.url} (linger_s)`);
        await linger(settings.linger_s * 1000, o.signal);
      }
      await close();
    },
    close,
  };
}

/** The remote-write push: a failure is a warning, never the run's. */
async function push(url: string, recorder: SeriesRecorder, timeoutMs: number, log: (line: string) => void): Promise<void> {
  const shown = redactUrlCredentials(url);
  try {
    const r = await pushRemoteWrite(url, recorder.series(), { timeoutMs });
    log(`remote write: ${r.series} series, ${r.samples} samples (${r.bytes} bytes) pushed to ${shown}`);
  } catch (error) {
    const why = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : error instanceof Error ? error.message : String(error);
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    log(`warning: remote write to ${shown} failed: ${why}${cause}; the run's results are written all the same`);
  }
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

// `roundload engine`: the embedded deployment standalone — SGLang PD in miniature (router, prefill, decode) or
// one unified server — with default settings or those of a YAML file, optional faults from another, until
// SIGINT or SIGTERM. Its first line stays `roundload engine listening on <entry URL> (model …)` (other tools read
// it); then any settings from the environment, this start's speed (engine.run_spread_pct), any faults, then each
// server's URL, metrics and log file. Progress goes to stderr; bad settings throw a located WorkloadError or a
// UsageError (cli.ts maps both to exit 2).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { engineSchema, loadEngineFaults, loadEngineSettings, resolveOtlp, tracingSchema, type EngineSettings, type OtlpExport } from '../config/index.js';
import { runSpeedText, startEngine, type EngineHandle, type EngineTraces } from '../engine/index.js';
import { redactUrlCredentials } from '../util/index.js';
import { VERSION } from '../version.js';
import { parse as parseYaml } from 'yaml';
import { ServerStartError, UsageError } from '../errors.js';
import * as flag from './flags.js';

export interface EngineCommandOptions {
  host: string;
  /** The entry port: the router's in `pd`, the engine's in `single`. */
  port: number;
  /** `pd` or `single`; overrides the settings file's `topology`. */
  topology?: string;
  /** PD ports. @default 0 (any free one, printed): a fixed default (a real sgl-router's 29000) made two engines on
   * one host clash */
  prefillPort?: number;
  decodePort?: number;
  routerMetricsPort?: number;
  /** Folder of the servers' log files. @default a fresh folder under the system temp dir, removed on exit */
  logDir?: string;
  /** YAML mapping of engine settings, or a workload file whose `engine:` section holds them. */
  settingsFile?: string;
  /** YAML list of engine faults (or a mapping with `faults:`, or a workload file): added after the settings' own. */
  faultsFile?: string;
  /** `--enable-trace`: every request's router, prefill and decode spans, exported over OTLP/HTTP. */
  enableTrace?: boolean;
  /** `--otlp-traces-endpoint`: where (a URL, or host:port); else the OTEL_EXPORTER_OTLP_* variables. */
  otlpTracesEndpoint?: string;
}

/** `--otlp-traces-endpoint` as SGLang takes it (`host:port`) or a URL, as the traces URL. */
function tracesEndpoint(value: string): string {
  const text = value.trim();
  return /^[^/:\s]+:\d+$/.test(text) ? `http://${text}/v1/traces` : flag.httpUrl('--otlp-traces-endpoint', text).href;
}

/** The export of the engine's spans, or null without --enable-trace. @throws UsageError for an endpoint nowhere. */
function engineExport(opts: EngineCommandOptions): OtlpExport | null {
  if (opts.enableTrace !== true) {
    if (opts.otlpTracesEndpoint !== undefined) throw new UsageError('--otlp-traces-endpoint needs --enable-trace (as SGLang: tracing is off without it)');
    return null;
  }
  const endpoint = opts.otlpTracesEndpoint === undefined ? null : tracesEndpoint(opts.otlpTracesEndpoint);
  const settings = resolveOtlp(tracingSchema.parse({ otlp: { traces_endpoint: endpoint } }), process.env);
  if (settings === null) throw new UsageError('--enable-trace needs --otlp-traces-endpoint URL (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)');
  return settings;
}

/** The environment variable whose `key=value` pairs override engine settings last, as a server restarted with
 * another environment (`systemctl set-environment …; systemctl restart …`) would run differently: an A/B arm's
 * setup can restart `roundload engine` with `ROUNDLOAD_ENGINE_SET="decode_speedup=1.057"`. */
export const ENGINE_SET_VARIABLE = 'ROUNDLOAD_ENGINE_SET';

/** `decode_speedup=1.057 decode_step_ms=30` (spaces, commas or semicolons between pairs; values read as YAML). */
export function engineEnvOverrides(text: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of (text ?? '').split(/[\s,;]+/).filter((p) => p !== '')) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`${ENGINE_SET_VARIABLE}: "${pair}" is not key=value (e.g. ${ENGINE_SET_VARIABLE}="decode_speedup=1.057")`);
    out[pair.slice(0, at)] = parseYaml(pair.slice(at + 1)) as unknown;
  }
  return out;
}

/** The engine settings the options describe: defaults, a settings file, plus a faults file, `--topology` and
 * ROUNDLOAD_ENGINE_SET (`env`). */
export async function resolveEngineSettings(opts: Pick<EngineCommandOptions, 'settingsFile' | 'faultsFile' | 'topology'>, env: string | undefined = undefined): Promise<EngineSettings> {
  const base = opts.settingsFile === undefined ? engineSchema.parse({}) : await loadEngineSettings(opts.settingsFile);
  const faults = opts.faultsFile === undefined ? [] : await loadEngineFaults(opts.faultsFile);
  if (opts.topology !== undefined) flag.oneOf('--topology', opts.topology, ['pd', 'single']);
  const merged = { ...base, faults: [...base.faults, ...faults], ...(opts.topology === undefined ? {} : { topology: opts.topology }), ...engineEnvOverrides(env) };
  // Validated again as a whole: a PD fault with `--topology single` is a located mistake, not a silent no-op.
  const checked = engineSchema.safeParse(merged);
  if (!checked.success)
    throw new UsageError(
      `engine settings${env === undefined || env === '' ? '' : ` (with ${ENGINE_SET_VARIABLE}="${env}")`}: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return checked.data;
}

/** The lines `roundload engine` prints after its first: each server, and the monitor targets to copy. */
export function describeServers(engine: EngineHandle): string[] {
  const width = Math.max(...engine.servers.map((s) => s.name.length));
  const lines = engine.servers.map((s) => `  ${s.name.padEnd(width)}  ${s.url}  metrics ${s.metricsUrl}${s.logFile === null ? '' : `  log ${s.logFile}`}`);
  const targets = engine.monitorTargets.map((t) => `{name: ${t.name}, url: "${t.url}"}`).join(', ');
  lines.push(`monitor.targets for this deployment: [${targets}]`);
  return lines;
}

/** Which server a port that failed to listen was for, named with the flag that asked for it: `the router's
 * metrics (--router-metrics-port)`; `the engine` for the entry port (`--port`), and when no flag asked for it. */
function serverOfPort(opts: Pick<EngineCommandOptions, 'port' | 'prefillPort' | 'decodePort' | 'routerMetricsPort'>, port: unknown): string {
  const asked = [
    ['the engine', '--port', opts.port],
    ["the router's metrics", '--router-metrics-port', opts.routerMetricsPort],
    ['the prefill server', '--prefill-port', opts.prefillPort],
    ['the decode server', '--decode-port', opts.decodePort],
  ] as const;
  const named = asked.filter(([, , p]) => p !== undefined && p !== 0 && p === port);
  if (named.length === 0 || (named.length === 1 && named[0]![1] === '--port')) return 'the engine';
  return `${named.map(([what]) => what).join(' or ')} (${named.map(([, flag]) => flag).join(', ')} ${String(port)})`;
}

export async function engineCommand(opts: EngineCommandOptions): Promise<void> {
  const entryPort = opts.port;
  const settings = await resolveEngineSettings(opts, process.env[ENGINE_SET_VARIABLE]);
  const otlp = engineExport(opts);
  const modelName = 'deepseek-v4-flash';
  const ports = {
    port: entryPort,
    prefillPort: opts.prefillPort ?? 0,
    decodePort: opts.decodePort ?? 0,
    routerMetricsPort: opts.routerMetricsPort ?? 0,
  };
  const ownLogDir = opts.logDir === undefined;
  const logDir = resolve(opts.logDir ?? mkdtempSync(join(tmpdir(), 'roundload-engine-')));
  let engine: EngineHandle;
  try {
    engine = await startEngine({ settings, host: opts.host, ...ports, modelName, logDir, trace: otlp !== null });
  } catch (error) {
    if (ownLogDir) rmSync(logDir, { recursive: true, force: true });
    // listen() failures (port taken, no such address) carry an OS code; anything else is a bug, shown as is.
    if (typeof (error as { code?: unknown } | null)?.code === 'string') {
      const { address, port } = error as { address?: unknown; port?: unknown };
      const at = typeof address === 'string' ? `${address.includes(':') ? `[${address}]` : address}:${String(port)}` : `${opts.host}:${entryPort}`;
      throw new ServerStartError(serverOfPort(opts, port), at, { cause: error });
    }
    throw error;
  }
  const shape = engine.topology === 'pd' ? 'topology pd: router → prefill → decode' : 'topology single';
  process.stderr.write(`roundload engine listening on ${engine.url} (model ${modelName}, ${shape})\n`);
  const envSet = process.env[ENGINE_SET_VARIABLE];
  if (envSet !== undefined && envSet.trim() !== '') process.stderr.write(`settings from ${ENGINE_SET_VARIABLE}: ${envSet.trim()}\n`);
  if (engine.runSpeed.spreadPct > 0) process.stderr.write(`${runSpeedText(engine.runSpeed)}: prefill and decode until this process stops\n`);
  if (settings.faults.length > 0) {
    process.stderr.write(`faults: ${settings.faults.map((f) => f.kind).join(', ')}\n`);
  }
  process.stderr.write(`${describeServers(engine).join('\n')}\n`);
  const tracing = otlp === null || engine.traces === null ? null : await exportEngineSpans(otlp, engine.traces);
  await new Promise<void>((done) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.stderr.write(`${signal}: closing the engine\n`);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await engine.close();
  // The requests still in a stage are exported as they stand, cut at the stop (bounded by the flush timeout).
  await tracing?.finish();
  // A folder we made is ours to remove (pass --log-dir to keep the logs).
  if (ownLogDir) rmSync(logDir, { recursive: true, force: true });
}

/** The engine's spans taken every quarter second and exported; `finish` adds the open ones and flushes. */
async function exportEngineSpans(settings: OtlpExport, traces: EngineTraces): Promise<{ finish(): Promise<void> }> {
  const { EngineSpanExport } = await import('../otel/index.js');
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const exporter = new EngineSpanExport({ settings, version: VERSION, log });
  log(`tracing: the servers' request spans go to ${redactUrlCredentials(settings.url)} (${settings.protocol})`);
  const timer = setInterval(() => exporter.add(traces.take()), 250);
  timer.unref();
  return {
    async finish() {
      clearInterval(timer);
      exporter.add(traces.close());
      await exporter.finish();
    },
  };
}

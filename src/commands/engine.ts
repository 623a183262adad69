// `roundload engine`: the embedded engine standalone, with default settings or those of a YAML file, and
// optional faults from another, until SIGINT or SIGTERM. Progress goes to stderr; bad settings throw a
// located WorkloadError or a UsageError (cli.ts maps both to exit 2).
import { engineSchema, loadEngineFaults, loadEngineSettings, type EngineSettings } from '../config/index.js';
import { startEngine } from '../engine/index.js';
import { ServerStartError, UsageError } from '../errors.js';

export interface EngineCommandOptions {
  host: string;
  port: number;
  /** YAML mapping of engine settings, or a workload file whose `engine:` section holds them. */
  settingsFile?: string;
  /** YAML list of engine faults (or a mapping with `faults:`, or a workload file): added after the settings' own. */
  faultsFile?: string;
}

/** The engine settings the options describe: defaults, a settings file, plus a faults file. */
export async function resolveEngineSettings(opts: Pick<EngineCommandOptions, 'settingsFile' | 'faultsFile'>): Promise<EngineSettings> {
  const settings = opts.settingsFile === undefined ? engineSchema.parse({}) : await loadEngineSettings(opts.settingsFile);
  if (opts.faultsFile === undefined) return settings;
  const faults = await loadEngineFaults(opts.faultsFile);
  return { ...settings, faults: [...settings.faults, ...faults] };
}

export async function engineCommand(opts: EngineCommandOptions): Promise<void> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got "${opts.port}"`);
  }
  const settings = await resolveEngineSettings(opts);
  const modelName = 'deepseek-v4-flash';
  const address = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  const engine = await startEngine({ settings, host: opts.host, port: opts.port, modelName }).catch((error: unknown) => {
    // listen() failures (port taken, no such address) carry an OS code; anything else is a bug, shown as is.
    if (typeof (error as { code?: unknown } | null)?.code === 'string') throw new ServerStartError('the engine', address, { cause: error });
    throw error;
  });
  process.stderr.write(`roundload engine listening on ${engine.url} (model ${modelName})\n`);
  if (settings.faults.length > 0) {
    process.stderr.write(`faults: ${settings.faults.map((f) => f.kind).join(', ')}\n`);
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.stderr.write(`${signal}: closing the engine\n`);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await engine.close();
}

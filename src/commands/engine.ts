// `roundload engine`: the embedded engine standalone, with default settings or those of a YAML file, until
// SIGINT or SIGTERM. Progress goes to stderr; bad settings throw a UsageError (cli.ts maps it to exit 2).
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { engineSchema, type EngineSettings } from '../config/schema.js';
import { startEngine } from '../engine/index.js';
import { UsageError } from '../errors.js';

export interface EngineCommandOptions {
  host: string;
  port: number;
  /** YAML mapping of engine settings, or a workload file whose `engine:` section holds them. */
  settingsFile?: string;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function loadSettings(file: string | undefined): Promise<EngineSettings> {
  if (file === undefined) return engineSchema.parse({});
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read engine settings ${file}: ${(err as Error).message}`, { cause: err, context: { file } });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text) ?? {};
  } catch (err) {
    throw new UsageError(`engine settings ${file} is not valid YAML: ${(err as Error).message}`, { cause: err, context: { file } });
  }
  // A whole workload file works too: take its engine: section.
  const section = isMapping(doc) && isMapping(doc['engine']) ? doc['engine'] : doc;
  const result = engineSchema.safeParse(section);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(top level)'}  ${i.message}`);
    throw new UsageError(`invalid engine settings ${file}:\n${lines.join('\n')}`, { context: { file } });
  }
  const settings = result.data;
  if (settings.output_tokens_min > settings.output_tokens_max) {
    throw new UsageError(`invalid engine settings ${file}:\n  output_tokens_min  must not exceed output_tokens_max (${settings.output_tokens_max})`, { context: { file } });
  }
  return settings;
}

export async function engineCommand(opts: EngineCommandOptions): Promise<void> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got "${opts.port}"`);
  }
  const settings = await loadSettings(opts.settingsFile);
  const modelName = 'deepseek-v4-flash';
  const engine = await startEngine({ settings, host: opts.host, port: opts.port, modelName });
  process.stderr.write(`roundload engine listening on ${engine.url} (model ${modelName})\n`);
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

// Engine settings and engine faults read from their own YAML files (`roundload engine --settings/--faults`),
// validated by the workload schema itself so every problem is located `file:line:col` like a workload's.
import { LineCounter, parseDocument } from 'yaml';
import { WorkloadError, type WorkloadIssue } from '../errors.js';
import { explainIssues } from './issues.js';
import { locate, positionOf } from './locate.js';
import { workloadSchema } from './schema.js';
import { readConfigFile } from './load.js';
import { isObject } from '../util/index.js';
import type { EngineSettings } from './engine-settings.js';
import type { EngineFault } from './engine-faults.js';

/** The file's text, refused past 1 MiB like a workload's (read at most that much). */
async function readText(file: string, what: string): Promise<string> {
  return readConfigFile(file, what);
}

/**
 * Validates `raw` mounted at a place in a workload (`mount`, e.g. `{engine: raw}`), and locates every issue in
 * the file: `prefix` is how many leading path segments the file itself does not have (`engine.faults` is 2 for a
 * bare list of faults).
 */
function validateMounted(text: string, file: string, mount: (raw: unknown) => { input: unknown; prefix: number }): ReturnType<typeof workloadSchema.parse> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const issues = doc.errors.map((e): WorkloadIssue => {
      const { line, col } = positionOf(lineCounter, e.pos[0]);
      return { where: `${file}:${line}:${col}`, field: '', message: `YAML syntax: ${e.message}` };
    });
    throw new WorkloadError(issues, { file });
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (cause) {
    throw new WorkloadError([{ where: `${file}:1:1`, field: '', message: `YAML: ${cause instanceof Error ? cause.message : String(cause)}` }], { file, cause });
  }
  const { input, prefix } = mount(raw);
  const result = workloadSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = explainIssues(result.error.issues, input).map((issue): WorkloadIssue => {
    const field = [...issue.path, ...(issue.key === undefined ? [] : [issue.key])].map(String).join('.');
    const { line, col } = locate(doc, lineCounter, issue.path.slice(prefix), issue.key);
    return { where: `${file}:${line}:${col}`, field, message: issue.message };
  });
  throw new WorkloadError(issues, { file });
}

/**
 * Engine settings from a YAML file: a mapping of `engine:` fields, or a whole workload file (its `engine:`
 * section is taken, the rest validated too).
 * @throws UsageError when the file cannot be read; WorkloadError (located) when the settings are invalid.
 */
export async function loadEngineSettings(file: string): Promise<EngineSettings> {
  const text = await readText(file, 'engine settings');
  const workload = validateMounted(text, file, (raw) => (isObject(raw) && 'engine' in raw ? { input: raw, prefix: 0 } : { input: { engine: raw }, prefix: 1 }));
  return workload.engine;
}

/**
 * Engine faults from a YAML file: a list of faults, a mapping with a `faults:` list, or a workload file
 * (its `engine.faults`).
 * @throws UsageError when the file cannot be read; WorkloadError (located) when a fault is invalid.
 */
export async function loadEngineFaults(file: string): Promise<EngineFault[]> {
  const text = await readText(file, 'engine faults');
  const workload = validateMounted(text, file, (raw) => {
    if (Array.isArray(raw)) return { input: { engine: { faults: raw } }, prefix: 2 };
    if (isObject(raw) && 'engine' in raw) return { input: raw, prefix: 0 };
    if (isObject(raw) && 'faults' in raw) return { input: { engine: raw }, prefix: 1 };
    return { input: { engine: { faults: raw } }, prefix: 2 };
  });
  return [...workload.engine.faults];
}

// Command-line overrides (`--set a.b=value`, `--agents`, `--rounds`, `--target`, `--label k=v`) applied onto
// the parsed-but-unvalidated workload, so the schema validates the combination once, like a file edit would.
import { parseDocument } from 'yaml';
import type { WorkloadIssue } from '../errors.js';
import { clip } from '../util/index.js';

/** Overrides from the command line. `--set`s apply in order, then the shortcuts, so a shortcut wins.
 * Fields may be passed as `undefined` (straight from commander's options): that means "not given". */
export interface Overrides {
  /** `path=value`; the value is read as YAML (`8`, `none`, `true`, `[64, 96]`, `{count: 3}`). */
  set?: readonly string[] | undefined;
  /** `--agents N`, same as `--set agents.count=N`. */
  agents?: number | undefined;
  /** `--rounds N`, same as `--set agents.rounds=N`. */
  rounds?: number | undefined;
  /** `--target URL`, same as `--set target.url=URL`. */
  target?: string | undefined;
  /** `k=v`, merged into `labels` (the value is always a string). */
  labels?: readonly string[] | undefined;
}

/** One override that was applied: where it came from (`--set agents.count`) and the key path it wrote. */
export interface AppliedOverride {
  where: string;
  path: readonly string[];
}

export interface OverrideResult {
  input: unknown;
  applied: AppliedOverride[];
  issues: WorkloadIssue[];
}

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `a string (${clip(JSON.stringify(value))})`;
  return `a ${typeof value} (${String(value)})`;
}

// defineProperty, not assignment: a `__proto__` segment must become an (unknown, rejected) key, never a prototype.
function put(container: Mapping | unknown[], key: string | number, value: unknown): void {
  Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Writes `value` at `path` inside `root` (mutated: it is our own copy). Returns an error message or undefined. */
function setPath(root: Mapping, path: readonly string[], value: unknown): string | undefined {
  let node: Mapping | unknown[] = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] ?? '';
    const last = i === path.length - 1;
    if (Array.isArray(node)) {
      const index = /^\d+$/.test(segment) ? Number(segment) : NaN;
      if (!(index <= node.length)) {
        return `${path.slice(0, i).join('.')} is a list of ${node.length}; use an index from 0 to ${node.length} instead of "${segment}"`;
      }
      if (last) {
        put(node, index, value);
        return undefined;
      }
      const child: unknown = node[index];
      if (child === undefined || child === null) put(node, index, {});
      else if (!isMapping(child) && !Array.isArray(child)) return `cannot set ${path.join('.')}: ${path.slice(0, i + 1).join('.')} is ${kindOf(child)}, not a mapping`;
      node = node[index] as Mapping | unknown[];
      continue;
    }
    if (last) {
      put(node, segment, value);
      return undefined;
    }
    const child = Object.hasOwn(node, segment) ? node[segment] : undefined;
    // A missing or empty (`agents:` with nothing under it) section is created, as if the file had it.
    if (child === undefined || child === null) put(node, segment, {});
    else if (!isMapping(child) && !Array.isArray(child)) return `cannot set ${path.join('.')}: ${path.slice(0, i + 1).join('.')} is ${kindOf(child)}, not a mapping`;
    node = node[segment] as Mapping | unknown[];
  }
  return undefined;
}

function parsePath(text: string): string[] | undefined {
  const segments = text
    .trim()
    .split('.')
    .map((s) => s.trim());
  return segments.every((s) => s !== '') ? segments : undefined;
}

/** Reads a `--set` value as YAML (a scalar or a flow collection); an error message when it is not YAML. */
function parseValue(text: string): { value: unknown } | { error: string } {
  const doc = parseDocument(text, { prettyErrors: false });
  const first = doc.errors[0];
  if (first !== undefined) return { error: `the value ${clip(JSON.stringify(text))} is not valid YAML (${first.message}); quote it if it is a string` };
  return { value: doc.toJS({ maxAliasCount: 100 }) as unknown };
}

/**
 * Applies overrides onto a copy of `input` (never onto `input` itself). Problems with an override's own syntax
 * are returned as issues located at the flag (`--set agents.count`), for the caller to throw with the rest.
 */
export function applyOverrides(input: unknown, overrides: Overrides): OverrideResult {
  const applied: AppliedOverride[] = [];
  const issues: WorkloadIssue[] = [];
  const hasAny = (overrides.set?.length ?? 0) > 0 || overrides.agents !== undefined || overrides.rounds !== undefined || overrides.target !== undefined || (overrides.labels?.length ?? 0) > 0;
  if (!hasAny) return { input, applied, issues };
  // An empty file parses to null: overrides then write into a fresh mapping, as onto an empty workload.
  const base: unknown = input === null || input === undefined ? {} : structuredClone(input);
  if (!isMapping(base)) {
    issues.push({ where: '--set', field: '', message: `cannot apply overrides: the workload is ${kindOf(base)}, not a mapping` });
    return { input: base, applied, issues };
  }

  const apply = (where: string, path: readonly string[], value: unknown): void => {
    const error = setPath(base, path, value);
    if (error !== undefined) issues.push({ where, field: path.join('.'), message: error });
    else applied.push({ where, path });
  };

  for (const entry of overrides.set ?? []) {
    const eq = entry.indexOf('=');
    const path = eq < 0 ? undefined : parsePath(entry.slice(0, eq));
    if (path === undefined) {
      issues.push({ where: `--set ${clip(entry)}`, field: '', message: 'expected path=value, e.g. --set agents.count=8 (a path is keys joined by dots)' });
      continue;
    }
    const where = `--set ${path.join('.')}`;
    const parsed = parseValue(entry.slice(eq + 1));
    if ('error' in parsed) issues.push({ where, field: path.join('.'), message: parsed.error });
    else apply(where, path, parsed.value);
  }
  if (overrides.agents !== undefined) apply('--agents', ['agents', 'count'], overrides.agents);
  if (overrides.rounds !== undefined) apply('--rounds', ['agents', 'rounds'], overrides.rounds);
  if (overrides.target !== undefined) apply('--target', ['target', 'url'], overrides.target);
  for (const entry of overrides.labels ?? []) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : entry.slice(0, eq).trim();
    if (key === '') {
      issues.push({ where: `--label ${clip(entry)}`, field: 'labels', message: 'expected key=value, e.g. --label arm=baseline' });
      continue;
    }
    // Not through a dotted path: a label key may itself contain dots (`team.name=infra`).
    apply(`--label ${clip(key)}`, ['labels', key], entry.slice(eq + 1));
  }
  return { input: base, applied, issues };
}

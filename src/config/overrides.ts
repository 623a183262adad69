// Command-line overrides (`--set a.b=value`, the typed flags such as `--agents` or `--via`, `--label k=v`)
// applied onto the parsed-but-unvalidated workload, so the schema validates the combination once, like a file
// edit would. A flag and a `--set` on the same field merge (a mapping) or, when they say different things, are
// refused at the flag: nothing either says is dropped silently.
import { parseDocument } from 'yaml';
import type { WorkloadIssue } from '../errors.js';
import { clip } from '../util/index.js';

/** A typed flag's value for one workload field: `--metrics-port 9100` is `{flag: '--metrics-port', path:
 * ['client_metrics', 'port'], value: 9100}`. Problems the schema finds in the value are reported at `flag`. */
export interface FlagOverride {
  /** The flag as the user typed it, e.g. `--metrics-port`. */
  flag: string;
  path: readonly string[];
  value: unknown;
}

/** Overrides from the command line. `--set`s apply in order, then the flags (`agents`, `rounds`, `target` and
 * `flags`). Fields may be passed as `undefined` (straight from commander's options): that means "not given". */
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
  /** The command's other typed flags, applied after `--set` and merged with it (see `applyFlag`). */
  flags?: readonly FlagOverride[] | undefined;
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
  const flags = flagsOf(overrides);
  const hasAny = (overrides.set?.length ?? 0) > 0 || flags.length > 0 || (overrides.labels?.length ?? 0) > 0;
  if (!hasAny) return { input, applied, issues };
  // An empty file parses to null: overrides then write into a fresh mapping, as onto an empty workload.
  const base: unknown = input === null || input === undefined ? {} : structuredClone(input);
  if (!isMapping(base)) {
    issues.push({ where: '--set', field: '', message: `cannot apply overrides: the workload is ${kindOf(base)}, not a mapping` });
    return { input: base, applied, issues };
  }

  const sets: SetWrite[] = [];
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
    else {
      apply(where, path, parsed.value);
      sets.push({ where, path, value: parsed.value });
    }
  }
  for (const flag of flags) {
    const merged = mergeWithSets(flag, sets);
    if ('conflict' in merged) issues.push({ where: flag.flag, field: flag.path.join('.'), message: merged.conflict });
    else apply(flag.flag, flag.path, merged.value);
  }
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

/** `--agents`, `--rounds`, `--target` and the command's typed flags, as one list. */
function flagsOf(o: Overrides): FlagOverride[] {
  return [
    ...(o.agents === undefined ? [] : [{ flag: '--agents', path: ['agents', 'count'], value: o.agents }]),
    ...(o.rounds === undefined ? [] : [{ flag: '--rounds', path: ['agents', 'rounds'], value: o.rounds }]),
    ...(o.target === undefined ? [] : [{ flag: '--target', path: ['target', 'url'], value: o.target }]),
    ...(o.flags ?? []),
  ];
}

/** A `--set` that was applied: where it came from, the path and the value it wrote. */
interface SetWrite {
  where: string;
  path: readonly string[];
  value: unknown;
}

const startsWith = (path: readonly string[], prefix: readonly string[]): boolean => prefix.length <= path.length && prefix.every((p, i) => path[i] === p);

/** The value at `path` inside `value` (undefined when the path leaves the mappings). */
function at(value: unknown, path: readonly string[]): unknown {
  let node = value;
  for (const key of path) {
    if (!isMapping(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const shown = (value: unknown): string => clip(JSON.stringify(value));

/**
 * What a flag writes once the `--set`s on the same field are taken into account:
 * - a `--set` at or above the flag's field must say the same there (`--via hop` with `--set target.via.kind=hop`);
 * - a `--set` below it is kept inside the flag's mapping (`--via hop` with `--set target.via.faults=[…]` gives
 *   `{kind: hop, faults: […]}`), unless the flag itself says something else there.
 * Anything else is a conflict, reported at the flag and naming the `--set`.
 */
function mergeWithSets(flag: FlagOverride, sets: readonly SetWrite[]): { value: unknown } | { conflict: string } {
  const value = structuredClone(flag.value);
  for (const set of sets) {
    if (startsWith(flag.path, set.path)) {
      const theirs = at(set.value, flag.path.slice(set.path.length));
      if (!same(theirs, flag.value)) return { conflict: conflictText(flag, set, flag.path, theirs) };
    } else if (startsWith(set.path, flag.path)) {
      const below = set.path.slice(flag.path.length);
      const ours = at(value, below);
      if (ours !== undefined && !same(ours, set.value)) return { conflict: conflictText(flag, set, set.path, set.value, ours) };
      if (!isMapping(value)) return { conflict: `${set.where} sets a field inside ${flag.path.join('.')}, which ${flag.flag} sets to ${shown(flag.value)}; give one of them` };
      const error = setPath(value, below, set.value);
      if (error !== undefined) return { conflict: `${set.where} cannot go inside ${flag.flag}'s ${flag.path.join('.')}: ${error}` };
    }
  }
  return { value };
}

function conflictText(flag: FlagOverride, set: SetWrite, path: readonly string[], theirs: unknown, ours: unknown = at(flag.value, path.slice(flag.path.length))): string {
  return `${flag.flag} and ${set.where} both set ${path.join('.')} (${shown(ours)} and ${shown(theirs)}); give one of them`;
}

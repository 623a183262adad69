// Reads a workload file: YAML → overrides → schema → a deeply frozen Workload. Every problem, in the file or in
// an override, is reported together in one WorkloadError with `file:line:col` (or the flag) and the key path.
import { open, type FileHandle } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { LineCounter, isScalar, parseDocument, visit, type Document, type YAMLError } from 'yaml';
import type { z } from 'zod';
import { UsageError, WorkloadError, type WorkloadIssue } from '../errors.js';
import { explainIssues, type ExplainedIssue } from './issues.js';
import { existsInDocument, locate, positionOf } from './locate.js';
import { applyOverrides, type AppliedOverride, type Overrides } from './overrides.js';
import { workloadSchema, type Workload } from './schema.js';
import { fsReason } from '../util/index.js';

const NAME_FALLBACK = 'workload';

/** The default workload name: the file's basename without extension, made to fit the name pattern. */
export function nameFromFile(file: string): string {
  const stem = basename(file, extname(file));
  const cleaned = stem
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return cleaned === '' ? NAME_FALLBACK : cleaned;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function syntaxIssue(file: string, lineCounter: LineCounter, error: YAMLError): WorkloadIssue {
  const { line, col } = positionOf(lineCounter, error.pos[0]);
  const message = error.code === 'MULTIPLE_DOCS' ? 'a workload file holds one YAML document (found a second "---")' : error.message;
  return { where: `${file}:${line}:${col}`, field: '', message: `YAML syntax: ${message}` };
}

function startsWith(path: readonly PropertyKey[], prefix: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => String(segment) === String(path[i]));
}

/** The override an issue came from: the last one that wrote at or above it, or that created the path it names.
 * `at` is where the workload sits in the document (override paths are relative to the workload). */
function overrideFor(issue: ExplainedIssue, applied: readonly AppliedOverride[], doc: Document, at: readonly PropertyKey[]): AppliedOverride | undefined {
  const full = issue.key === undefined ? issue.path : [...issue.path, issue.key];
  for (let i = applied.length - 1; i >= 0; i--) {
    const override = applied[i];
    if (override === undefined) continue;
    if (startsWith(full, override.path)) return override;
    if (startsWith(override.path, full) && !existsInDocument(doc, [...at, ...full])) return override;
  }
  return undefined;
}

function where(lineCounter: LineCounter, offset: number): string {
  const { line, col } = positionOf(lineCounter, offset);
  return `${line}:${col}`;
}

/** Offsets of every repeated key in every mapping, in one pass. */
function duplicateKeys(doc: Document): number[] {
  const found: number[] = [];
  visit(doc, {
    Map(_, map) {
      // SameValueZero, like yaml's own check: the number 1 and the string "1" are different keys.
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) found.push(pair.key.range?.[0] ?? 0);
        seen.add(pair.key.value);
      }
    },
  });
  return found;
}

/** A YAML text parsed for validation: its document and line counter (to locate problems) and its value. */
export interface ParsedYaml {
  doc: Document;
  lineCounter: LineCounter;
  value: unknown;
}

/**
 * Parses one YAML document. @param what names the file kind in the error (`workload`, `ab file`).
 * @throws WorkloadError on a syntax error or an alias bomb.
 */
export function parseYaml(text: string, file: string, what = 'workload'): ParsedYaml {
  const lineCounter = new LineCounter();
  // yaml's own duplicate-key check compares each key with every earlier one (40k keys: 9 s); ours is a set.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    throw new WorkloadError(
      doc.errors.map((e) => syntaxIssue(file, lineCounter, e)),
      { file, what },
    );
  }
  const duplicates = duplicateKeys(doc);
  if (duplicates.length > 0) {
    throw new WorkloadError(
      duplicates.map((offset) => ({ where: `${file}:${where(lineCounter, offset)}`, field: '', message: 'YAML syntax: Map keys must be unique' })),
      { file, what },
    );
  }
  try {
    return { doc, lineCounter, value: doc.toJS({ maxAliasCount: 100 }) as unknown };
  } catch (cause) {
    // Only alias bombs get here (`maxAliasCount`); say so rather than hang or crash.
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new WorkloadError([{ where: `${file}:1:1`, field: '', message: `YAML: ${message}` }], { file, cause, what });
  }
}

/** The issues of a failed validation, located in the document under `at` (or at the override that caused them), file order. */
function locatedIssues(
  issues: readonly ExplainedIssue[],
  parsed: ParsedYaml,
  file: string,
  at: readonly PropertyKey[],
  applied: readonly AppliedOverride[],
): { located: WorkloadIssue[]; fromFlags: WorkloadIssue[] } {
  const located: { issue: WorkloadIssue; line: number; col: number }[] = [];
  const fromFlags: WorkloadIssue[] = [];
  const more: WorkloadIssue[] = [];
  for (const issue of issues) {
    if (issue.more === true) {
      more.push({ where: file, field: '', message: issue.message });
      continue;
    }
    const path = [...at, ...issue.path];
    const field = [...path, ...(issue.key === undefined ? [] : [issue.key])].map(String).join('.');
    const override = overrideFor(issue, applied, parsed.doc, at);
    if (override !== undefined) {
      fromFlags.push({ where: override.where, field, message: issue.message });
      continue;
    }
    const { line, col } = locate(parsed.doc, parsed.lineCounter, path, issue.key);
    located.push({ issue: { where: `${file}:${line}:${col}`, field, message: issue.message }, line, col });
  }
  // File order reads best; zod's own order follows the schema, not the file.
  located.sort((a, b) => a.line - b.line || a.col - b.col);
  return { located: [...located.map((l) => l.issue), ...more], fromFlags };
}

/**
 * Validates `input` (the value at `at` inside `parsed`, e.g. `[]` for a whole file) with `schema`, every
 * problem located as `file:line:col`. For files that are not workloads (an ab file).
 * @throws WorkloadError listing every problem found.
 */
export function validateYaml<S extends z.ZodType>(schema: S, input: unknown, parsed: ParsedYaml, file: string, options: { at?: readonly PropertyKey[]; what?: string } = {}): z.output<S> {
  // jitless: a file is parsed once, and zod's fast path compiles a parser per object schema (new Function) first.
  const result = schema.safeParse(input, { jitless: true });
  if (result.success) return result.data;
  const { located } = locatedIssues(explainIssues(result.error.issues, input, schema), parsed, file, options.at ?? [], []);
  throw new WorkloadError(located, { file, ...(options.what === undefined ? {} : { what: options.what }) });
}

/**
 * Validates a workload value found at `at` inside a parsed file (`[]`: the file is the workload; `['workload']`:
 * written inline in an ab file), with overrides applied first. Never mutates `raw` or `overrides`.
 * @param name the default name when the workload gives none.
 * @throws WorkloadError listing every problem found.
 */
export function workloadFromYaml(raw: unknown, parsed: ParsedYaml, file: string, options: { at?: readonly PropertyKey[]; overrides?: Overrides; name: string; what?: string }): Workload {
  const at = options.at ?? [];
  // An empty file (or one of only comments) is the all-defaults workload.
  const { input, applied, issues: overrideIssues } = applyOverrides(raw ?? {}, options.overrides ?? {});
  const result = workloadSchema.safeParse(input, { jitless: true });
  if (!result.success || overrideIssues.length > 0) {
    const { located, fromFlags } = locatedIssues(result.success ? [] : explainIssues(result.error.issues, input), parsed, file, at, applied);
    throw new WorkloadError([...located, ...overrideIssues, ...fromFlags], { file, ...(options.what === undefined ? {} : { what: options.what }) });
  }
  const { name, ...sections } = result.data;
  const workload: Workload = { name: name ?? options.name, ...sections };
  return deepFreeze(workload);
}

/**
 * Parses and validates workload text. Pure: reads nothing, and never mutates `overrides`.
 * @param file used in messages and for the default name; need not exist.
 * @throws WorkloadError listing every problem found.
 */
export function parseWorkload(text: string, file: string, overrides: Overrides = {}): Workload {
  const parsed = parseYaml(text, file);
  return workloadFromYaml(parsed.value, parsed, file, { overrides, name: nameFromFile(file) });
}

/**
 * Reads, parses and validates a workload file.
 * @throws UsageError when the file cannot be read; WorkloadError when it is not a valid workload.
 */
export async function loadWorkload(file: string, overrides: Overrides = {}): Promise<Workload> {
  return parseWorkload(await readConfigFile(file, 'workload'), file, overrides);
}

/** A config file that cannot be read, as ERR_USAGE: `cannot read <what> file <file>: <why>` (the OS reason in
 * words, util's fsReason); `context.reason` keeps the why alone for callers that say the rest themselves. */
export function configReadError(file: string, what: string, cause: unknown): UsageError {
  const reason = fsReason(cause);
  return new UsageError(`cannot read ${what} file ${file}: ${reason}`, { context: { file, reason }, cause });
}

/** Largest workload or ab file read: anything bigger is refused before it is parsed. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Reads a config file (workload, ab file) as UTF-8, reading at most {@link MAX_CONFIG_BYTES} + 1 bytes, so a
 * huge file (or /dev/zero) is refused at once instead of parsed for minutes.
 * @throws UsageError when it cannot be read; WorkloadError when it is larger than 1 MiB.
 */
export async function readConfigFile(file: string, what: string): Promise<string> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let size = 0;
    while (size < buffer.length) {
      const { bytesRead } = await handle.read(buffer, size, buffer.length - size, null);
      if (bytesRead === 0) break;
      size += bytesRead;
    }
    if (size > MAX_CONFIG_BYTES) {
      throw new WorkloadError(
        [{ where: file, field: '', message: `the file is larger than 1 MiB (${MAX_CONFIG_BYTES.toLocaleString('en-US')} bytes), the most a ${what} file may be; a workload is a few kilobytes` }],
        { file, what },
      );
    }
    return buffer.toString('utf8', 0, size);
  } catch (cause) {
    if (cause instanceof WorkloadError) throw cause;
    throw configReadError(file, what, cause);
  } finally {
    await handle?.close();
  }
}

// Turns zod issues into human sentences (`expected a number, got string "four"`), one per problem,
// still keyed by path; locating them in the YAML file is locate.ts's job.
import { z } from 'zod';
import { clip } from '../util/index.js';
import { closest } from './suggest.js';
import { workloadSchema } from './schema.js';

type Path = readonly PropertyKey[];

/** One problem, worded for people, not yet located. `key` is set for an unknown key inside the object at `path`. */
export interface ExplainedIssue {
  path: Path;
  key?: string;
  message: string;
  /** The closing "… and N more" line of a cut report: kept last, wherever the others sort. */
  more?: true;
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping (key: value)',
  record: 'a mapping (key: value)',
  array: 'a list',
  null: 'null',
};

/** How a value reads in a message: `string "four"`, `number 1.5`, `a list`, `null (empty value)`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null (an empty value)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `string ${clip(JSON.stringify(value))}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** The value at `path` inside `root`, or undefined. */
export function valueAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    if (!Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[segment];
  }
  return node;
}

/** The keys the schema allows in the object at `path` (for suggestions), or [] when it is not an object. */
export function keysAt(path: Path, schema: z.ZodType = workloadSchema, value?: unknown): string[] {
  let node: z.ZodType | undefined = schema;
  let i = 0;
  while (node !== undefined) {
    if (node instanceof z.ZodDefault || node instanceof z.ZodPrefault || node instanceof z.ZodOptional || node instanceof z.ZodNullable) {
      node = node.unwrap() as z.ZodType;
      continue;
    }
    if (node instanceof z.ZodDiscriminatedUnion && i === path.length) {
      // The object itself is one of a `kind: …` union (a fault): its keys are those of the option its
      // discriminator names, e.g. `kind: drip` → after_chunks, interval_ms, bytes…
      const key = String((node.def as { discriminator: unknown }).discriminator);
      const tag = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
      const option = (node.options as readonly z.ZodType[]).find((o) => o instanceof z.ZodObject && (o.shape as Record<string, z.ZodType>)[key]?.safeParse(tag).success === true);
      return option === undefined ? [] : keysAt([], option);
    }
    if (node instanceof z.ZodObject) {
      const shape = node.shape as Record<string, z.ZodType>;
      if (i === path.length) return Object.keys(shape);
      node = shape[String(path[i++])];
      continue;
    }
    if (i === path.length) return [];
    if (node instanceof z.ZodArray) {
      node = node.element as z.ZodType;
      i++;
      continue;
    }
    if (node instanceof z.ZodRecord) {
      node = node.valueType as z.ZodType;
      i++;
      continue;
    }
    if (node instanceof z.ZodUnion) {
      // The first option that leads somewhere with keys (only conversation.tools is a union of object lists).
      const rest = path.slice(i);
      for (const option of node.options as readonly z.ZodType[]) {
        const keys = keysAt(rest, option);
        if (keys.length > 0) return keys;
      }
      return [];
    }
    return [];
  }
  return [];
}

function bound(value: number | bigint): string {
  return String(value);
}

function tooSmall(issue: z.core.$ZodIssueTooSmall): string {
  const n = bound(issue.minimum);
  if (issue.origin === 'array') return issue.minimum === 1 ? 'must not be an empty list' : `must have at least ${n} items`;
  if (issue.origin === 'string') return issue.minimum === 1 ? 'must not be empty' : `must be at least ${n} characters long`;
  return issue.inclusive === false ? `must be greater than ${n}` : `must be at least ${n}`;
}

function tooBig(issue: z.core.$ZodIssueTooBig): string {
  const n = bound(issue.maximum);
  if (issue.origin === 'array') return `must have at most ${n} items`;
  if (issue.origin === 'string') return `must be at most ${n} characters long`;
  return issue.inclusive === false ? `must be less than ${n}` : `must be at most ${n}`;
}

function oneOf(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
}

function invalidValue(values: readonly unknown[], got: unknown): string {
  const choices = values.filter((v): v is string => typeof v === 'string');
  const guess = typeof got === 'string' ? closest(got, choices) : undefined;
  return `must be one of ${oneOf(values)}; got ${describeValue(got)}${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`;
}

/** What one union option wanted, judged by its top-level issues: `one of default, none` or `a list`. */
function unionExpectations(branches: readonly (readonly z.core.$ZodIssue[])[]): string[] {
  const wanted: string[] = [];
  for (const issues of branches) {
    for (const issue of issues) {
      if (issue.path.length > 0) continue;
      if (issue.code === 'invalid_value') wanted.push(oneOf(issue.values));
      else if (issue.code === 'invalid_type') wanted.push(EXPECTED[issue.expected] ?? issue.expected);
    }
  }
  return wanted;
}

function explainOne(issue: z.core.$ZodIssue, input: unknown, prefix: Path, out: ExplainedIssue[], schema: z.ZodType, limit: number): void {
  if (out.length >= limit) return;
  const path = [...prefix, ...issue.path];
  const got = valueAt(input, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const valid = keysAt(path, schema, got);
      for (const key of issue.keys) {
        if (out.length >= limit) return;
        const guess = closest(key, valid);
        const hint = guess !== undefined ? ` (did you mean "${guess}"?)` : valid.length > 0 ? `; valid keys: ${valid.join(', ')}` : '';
        out.push({ path, key, message: `unknown key "${clip(key)}"${hint}` });
      }
      return;
    }
    case 'invalid_type': {
      // zod reports "expected int" both for 1.5 and for a string; say the useful thing for each.
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (got === undefined) out.push({ path, message: `is required (${expected})` });
      else out.push({ path, message: `expected ${expected}, got ${describeValue(got)}` });
      return;
    }
    case 'invalid_value':
      out.push({ path, message: invalidValue(issue.values, got) });
      return;
    case 'too_small':
      out.push({ path, message: `${tooSmall(issue)}, got ${describeValue(got)}` });
      return;
    case 'too_big':
      out.push({ path, message: `${tooBig(issue)}, got ${describeValue(got)}` });
      return;
    case 'invalid_format': {
      // Our schema words its own formats ("must be an http:// or https:// URL"); zod's defaults start "Invalid".
      const what = issue.message.startsWith('Invalid') ? `must be a valid ${issue.format}` : issue.message;
      out.push({ path, message: `${what}, got ${describeValue(got)}` });
      return;
    }
    case 'invalid_union': {
      // A discriminated union (`kind: …`) whose discriminator matched no option lists the options itself.
      const options = (issue as { options?: unknown }).options;
      if (Array.isArray(options) && options.length > 0) {
        out.push({ path, message: invalidValue(options, got) });
        return;
      }
      // If some option got past the type check and failed deeper, its inner issues are the useful ones.
      const deeper = issue.errors.find((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
      if (deeper !== undefined) {
        for (const inner of deeper) explainOne(inner, input, path, out, schema, limit);
        return;
      }
      const wanted = unionExpectations(issue.errors);
      const expectation = wanted.length > 0 ? wanted.join(', or ') : 'a different value';
      out.push({ path, message: `must be ${wanted.length > 0 ? 'one of ' : ''}${expectation}; got ${describeValue(got)}` });
      return;
    }
    case 'invalid_key':
    case 'invalid_element':
      for (const inner of issue.issues) explainOne(inner, input, path, out, schema, limit);
      return;
    case 'not_multiple_of':
      out.push({ path, message: `must be a multiple of ${issue.divisor}, got ${describeValue(got)}` });
      return;
    case 'custom':
      out.push({ path, message: issue.message });
      return;
  }
}

/** Most problems worded in one report: a file with 40k stray keys gets the first ones and a count, at once. */
export const MAX_EXPLAINED_ISSUES = 100;

/** How many problems zod reported in all (an unknown-keys issue counts each key). */
function problemCount(issues: readonly z.core.$ZodIssue[]): number {
  return issues.reduce((n, issue) => n + (issue.code === 'unrecognized_keys' ? issue.keys.length : 1), 0);
}

/** Every zod issue as one or more worded problems (an unknown-keys issue becomes one per key), at most
 * `limit` of them, then one more saying how many were left out. `schema` is the one validated against (for
 * "did you mean" suggestions). */
export function explainIssues(issues: readonly z.core.$ZodIssue[], input: unknown, schema: z.ZodType = workloadSchema, limit = MAX_EXPLAINED_ISSUES): ExplainedIssue[] {
  const out: ExplainedIssue[] = [];
  for (const issue of issues) explainOne(issue, input, [], out, schema, limit);
  const total = problemCount(issues);
  if (out.length >= limit && total > out.length) out.push({ path: [], more: true, message: `… and about ${(total - out.length).toLocaleString('en-US')} more problems (fix these first)` });
  return out;
}

// The ab file (`roundload ab`): a base workload (a file or inline), arms that override it and may run shell
// commands around each run, and how many times each arm runs. Validated like a workload: every problem
// located as file:line:col, an arm's `set` problems at that `set` entry.
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError, WorkloadError, type WorkloadIssue } from '../errors.js';
import { fsReason } from '../util/index.js';
import { checkBounds, refineIssues } from './bounds.js';
import { locate } from './locate.js';
import { nameFromFile, parseYaml, readConfigFile, validateYaml, workloadFromYaml, type ParsedYaml } from './load.js';
import type { Workload } from './schema.js';
import { AB_FAMILIES, type AbFamily } from '../types/index.js';

/** One arm of an A/B. */
export const abArmSchema = z.strictObject({
  /** The arm's name: in results folder names, the `arm` label and the comparison. */
  name: z.string().regex(/^[A-Za-z0-9._-]{1,32}$/, 'must be 1-32 letters, digits, ., _ or -'),
  /** Labels added to every run of the arm (beside `arm: <name>` and `repeat: <n>`). @default {} */
  labels: z.record(z.string(), z.string()).default({}),
  /** Overrides of the base workload, as `--set` takes them: `path=value`, e.g. `engine.decode_speedup=1.128`. @default [] */
  set: z.array(z.string()).default([]),
  /** Shell command run before each run of the arm (restart the server with this arm's settings, say);
   * a non-zero exit stops the A/B. @default null */
  setup: z.string().min(1).nullable().default(null),
  /** Shell command run after each run of the arm, even a failed one. @default null */
  teardown: z.string().min(1).nullable().default(null),
  /** After setup, poll this URL until it answers 200 (each GET bounded), or fail the arm run. @default null */
  health: z
    .strictObject({
      /** URL to GET, e.g. `http://10.0.0.5:30000/health`. */
      url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
      /** Longest wait for a 200. @default 300 */
      timeout_s: z.number().positive().max(86_400).default(300),
      /** Pause between polls. @default 1000 */
      interval_ms: z.number().int().min(10).default(1000),
    })
    .nullable()
    .default(null),
});

export const abFileSchema = z
  .strictObject({
    /** The base workload: a workload file (relative to this file) or the workload itself, inline. */
    workload: z.union([z.string().min(1), z.record(z.string(), z.unknown())]),
    /** The arms, at least two; the first is the baseline A every other arm is compared with. */
    arms: z
      .array(abArmSchema)
      .min(2)
      .superRefine((arms, ctx) => {
        const seen = new Set<string>();
        arms.forEach((arm, i) => {
          if (seen.has(arm.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `arm name "${arm.name}" is used twice` });
          seen.add(arm.name);
        });
      }),
    /** Run exactly this many pairs (rounds of every arm: A B, B A, A B … for 2; A B C, B C A, C A B for 3) and
     * judge them once, at a fixed-sample level, by the same four calls. Unset (the default): the stopping rule
     * `until` decides how many. @default null */
    repeats: z.number().int().min(1).max(100).nullable().default(null),
    /** Longest a setup or teardown command may run; past it, it is killed and the A/B stops. @default 300 */
    command_timeout_s: z.number().positive().max(86_400).default(300),
    /** Pause between two runs (after teardown, before the next setup). @default 0 */
    pause_s: z.number().min(0).max(3600).default(0),
    /** The rule every figure is judged by. Without `repeats`, pairs run until every headline figure is better,
     * worse or equivalent within the margins, or a limit is reached (docs/ab.md). With `repeats`, only the
     * margins apply. @default {min_effect_pct: 3, min_effect_points: 1, max_pairs: 10} */
    until: z
      .strictObject({
        /** The smallest difference that matters, in percent of the baseline. @default 3 */
        min_effect_pct: z.number().positive().max(100).default(3),
        /** The smallest difference in a rate (errors+hangs) that matters, in percentage points. @default 1 */
        min_effect_points: z.number().positive().max(100).default(1),
        /** The most pairs; alpha is split over the looks after each. @default 10 */
        max_pairs: z.number().int().min(3).max(100).optional(),
        /** The most time for all pairs; null: no time limit. @default null */
        max_time_s: z.number().positive().max(31_536_000).nullable().optional(),
        /** Which headline figures the A/B waits for (every phase's, for decode/ttft/itl/e2e): a claim about decode
         * throughput need not wait for e2e p50 to settle. The others are still called. @default all five */
        figures: z.array(z.enum(AB_FAMILIES)).min(1).optional(),
      })
      .default({ min_effect_pct: 3, min_effect_points: 1 }),
  })
  .superRefine((ab, ctx) => {
    const stopping = (['max_pairs', 'max_time_s', 'figures'] as const).filter((k) => ab.until[k] !== undefined);
    if (ab.repeats !== null && stopping.length > 0)
      ctx.addIssue({
        code: 'custom',
        path: ['until', stopping[0]!],
        message: `repeats runs exactly ${ab.repeats} pairs; ${stopping.join(', ')} belong to the stopping rule: drop them, or drop repeats to let the rule decide`,
      });
    // Times past one Node timer (bounds.ts); the base workload is checked as a workload.
    const { workload: _workload, ...rest } = ab;
    checkBounds(rest, refineIssues(ctx));
  });
export type AbArmSpec = z.output<typeof abArmSchema>;

/** An arm, resolved: its spec and the workload its runs use (base + `set` + labels). */
export interface AbArm extends AbArmSpec {
  workload: Workload;
}

export interface AbPlan {
  file: string;
  /** The base workload file, or null when inline. */
  workloadFile: string | null;
  arms: AbArm[];
  /** Pairs (rounds) at most: the stopping rule's max_pairs, or exactly `repeats`. */
  repeats: number;
  commandTimeoutMs: number;
  pauseMs: number;
  /** The margins every figure is judged with. */
  minEffectPct: number;
  minEffectPoints: number;
  /** The stopping rule, or null when `repeats` fixes the pairs. */
  until: AbStoppingRule | null;
}

export interface AbStoppingRule {
  minEffectPct: number;
  minEffectPoints: number;
  maxPairs: number;
  maxTimeMs: number | null;
  /** The figures the A/B waits for (`until.figures`). */
  waitFor: AbFamily[];
}

/** The ab-file position of an arm's `set` entry for `path` (an override problem is reported there). */
function remapOverrides(error: WorkloadError, arm: number, set: readonly string[], ab: ParsedYaml, file: string): WorkloadIssue[] {
  return error.issues.map((issue) => {
    const flag = /^--(set|label) (.+)$/.exec(issue.where);
    if (flag === null) return issue;
    const j = flag[1] === 'set' ? set.findIndex((entry) => (entry.includes('=') ? entry.slice(0, entry.indexOf('=')) : entry).trim() === flag[2]) : -1;
    const path = j >= 0 ? ['arms', arm, 'set', j] : ['arms', arm];
    const { line, col } = locate(ab.doc, ab.lineCounter, path);
    return { where: `${file}:${line}:${col}`, field: issue.field, message: `${issue.message} (arms.${arm}${j >= 0 ? `.set.${j}` : ''})` };
  });
}

/**
 * Parses and validates ab-file text; `readWorkload` reads a base workload file named in it.
 * @throws WorkloadError (every problem located), UsageError when the base workload file cannot be read.
 */
export async function parseAbFile(text: string, file: string, readWorkload: (path: string) => Promise<string> = (p) => readConfigFile(p, 'workload')): Promise<AbPlan> {
  const parsed = parseYaml(text, file, 'ab file');
  const ab = validateYaml(abFileSchema, parsed.value ?? {}, parsed, file, { what: 'ab file' });
  let base: { raw: unknown; parsed: ParsedYaml; file: string; at: readonly PropertyKey[]; name: string };
  let workloadFile: string | null = null;
  if (typeof ab.workload === 'string') {
    workloadFile = resolve(dirname(file), ab.workload);
    let workloadText: string;
    try {
      workloadText = await readWorkload(workloadFile);
    } catch (cause) {
      if (cause instanceof WorkloadError) throw cause;
      const { line, col } = locate(parsed.doc, parsed.lineCounter, ['workload']);
      throw new WorkloadError([{ where: `${file}:${line}:${col}`, field: 'workload', message: `cannot read the workload file ${workloadFile}: ${readReason(cause)}` }], {
        file,
        what: 'ab file',
        cause,
      });
    }
    const workloadParsed = parseYaml(workloadText, workloadFile);
    base = { raw: workloadParsed.value, parsed: workloadParsed, file: workloadFile, at: [], name: nameFromFile(workloadFile) };
  } else {
    base = { raw: ab.workload, parsed, file, at: ['workload'], name: nameFromFile(file) };
  }
  const issues: WorkloadIssue[] = [];
  const arms: AbArm[] = [];
  ab.arms.forEach((arm, i) => {
    const labels = [...Object.entries(arm.labels).map(([k, v]) => `${k}=${v}`), `arm=${arm.name}`];
    try {
      arms.push({ ...arm, workload: workloadFromYaml(base.raw, base.parsed, base.file, { at: base.at, overrides: { set: arm.set, labels }, name: base.name }) });
    } catch (error) {
      if (!(error instanceof WorkloadError)) throw error;
      for (const issue of remapOverrides(error, i, arm.set, parsed, file)) if (!issues.some((x) => x.where === issue.where && x.message === issue.message)) issues.push(issue);
    }
  });
  if (issues.length > 0) throw new WorkloadError(issues, { file, what: 'ab file' });
  const u = ab.until;
  const until: AbStoppingRule | null =
    ab.repeats !== null
      ? null
      : {
          minEffectPct: u.min_effect_pct,
          minEffectPoints: u.min_effect_points,
          maxPairs: u.max_pairs ?? 10,
          maxTimeMs: u.max_time_s === undefined || u.max_time_s === null ? null : u.max_time_s * 1000,
          waitFor: u.figures ?? [...AB_FAMILIES],
        };
  return {
    file,
    workloadFile,
    arms,
    repeats: until?.maxPairs ?? ab.repeats!,
    commandTimeoutMs: ab.command_timeout_s * 1000,
    pauseMs: ab.pause_s * 1000,
    minEffectPct: u.min_effect_pct,
    minEffectPoints: u.min_effect_points,
    until,
  };
}

/** Reads and validates an ab file. @throws UsageError when it cannot be read; WorkloadError when it is wrong. */
export async function loadAbFile(file: string): Promise<AbPlan> {
  return parseAbFile(await readConfigFile(file, 'ab'), file);
}

/** Why the base workload could not be read: the reason readConfigFile gave, or util's fsReason of the error. */
function readReason(cause: unknown): string {
  return cause instanceof UsageError && typeof cause.context['reason'] === 'string' ? cause.context['reason'] : fsReason(cause);
}

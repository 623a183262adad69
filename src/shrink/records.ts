// What a shrink records: each try, each variant (shrink.json) and the result, shared by the loop and the report.
import type { Best, StepName, TrialResult } from './steps.js';

export interface TryRecord {
  attempt: number;
  fails: boolean;
  first_failure_round: number | null;
  hangs: number;
  errors_by_class: Readonly<Record<string, number>>;
  duration_ms: number;
  status: string;
  dir: string | null;
}

/** One variant as shrink.json records it. */
export interface VariantRecord {
  n: number;
  slug: string;
  step: StepName;
  label: string;
  settings: Record<string, unknown>;
  verdict: TrialResult['verdict'];
  kept: boolean;
  tries: TryRecord[];
  duration_ms: number;
}

export interface ShrinkResult {
  originalFails: boolean;
  /** The smallest shape that failed k of k (the original's when nothing smaller did); null when the original passed. */
  best: Best | null;
  /** The via is needed (direct passes), not needed (direct fails too), or null: not tried. */
  pathNeeded: boolean | null;
  variants: VariantRecord[];
  /** The time budget ran out (or the shrink was stopped) before every step was done. */
  stoppedEarly: boolean;
  elapsedMs: number;
}

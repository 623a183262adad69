// The limits a run judged itself by, read back from its run.json: what `report` (a rebuild) and `merge` judge
// it by again. One reader, so a rebuilt and a merged summary never judge the same run differently.
import { DEFAULT_THRESHOLDS, type ThresholdLimits } from '../analysis/index.js';
import { thresholdsSchema } from '../config/index.js';
import { isObject } from '../util/index.js';

/** The run's `thresholds:` as it resolved them; a run.json of another version: every limit it has that reads
 * as one (a note says so), the defaults for the rest; none written: the defaults. */
export function runThresholds(workload: Record<string, unknown>, notes: string[]): ThresholdLimits {
  const t = workload.thresholds;
  if (!isObject(t)) return DEFAULT_THRESHOLDS;
  const parsed = thresholdsSchema.safeParse(t);
  if (parsed.success) return parsed.data;
  notes.push('run.json thresholds are not all readable by this version: the limits it could read are kept, the defaults stand for the rest');
  const num = (k: 'hangs' | 'error_rate' | 'ttft_p99_ms' | 'itl_p99_ms' | 'e2e_p99_ms' | 'decode_tokens_per_s_min'): number | null => (typeof t[k] === 'number' ? t[k] : DEFAULT_THRESHOLDS[k]);
  return {
    ...DEFAULT_THRESHOLDS,
    hangs: t.hangs === null ? null : num('hangs'),
    error_rate: num('error_rate'),
    ttft_p99_ms: num('ttft_p99_ms'),
    itl_p99_ms: num('itl_p99_ms'),
    e2e_p99_ms: num('e2e_p99_ms'),
    decode_tokens_per_s_min: num('decode_tokens_per_s_min'),
    per_window: t.per_window === true,
  };
}

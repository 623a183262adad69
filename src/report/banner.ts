// The verdict a person reads first and last on the summary: `PASS`, `FAIL (exit 1): <the failed
// thresholds>` or `INTERRUPTED (exit 130)`, with the results folder. The exit code comes from the same
// verdict, so the banner and `$?` never disagree.
import type { Summary } from '../analysis/index.js';
import type { Colors } from './progress-line.js';

export interface RunVerdict {
  word: 'PASS' | 'FAIL' | 'INTERRUPTED';
  exitCode: number;
  /** What failed, one phrase each (the failed thresholds' messages). */
  reasons: string[];
}

/** The verdict of a run from its summary: interrupted (130), a threshold failed or the run did not complete (1), or pass (0). */
export function runVerdict(s: Summary): RunVerdict {
  const failed = s.thresholds.results.filter((r) => !r.ok).map((r) => r.message);
  if (!s.thresholds.ok && failed.length === 0) failed.push('a threshold failed');
  if (s.run.status === 'interrupted') return { word: 'INTERRUPTED', exitCode: 130, reasons: failed };
  if (s.run.status !== 'completed') failed.unshift(`the run ended ${s.run.status}`);
  return failed.length > 0 ? { word: 'FAIL', exitCode: 1, reasons: failed } : { word: 'PASS', exitCode: 0, reasons: [] };
}

/** `PASS · results DIR`, `FAIL (exit 1): 2 hung requests > limit 0 · results DIR`, `INTERRUPTED (exit 130) · results DIR`. */
export function bannerLine(v: RunVerdict, dir: string, c: Colors): string {
  const where = `${c.dim('·')} results ${dir}`;
  switch (v.word) {
    case 'PASS':
      return `${c.bold(c.green('PASS'))} ${where}`;
    case 'FAIL':
      return `${c.bold(c.red(`FAIL (exit ${v.exitCode})`))}: ${v.reasons.join('; ')} ${where}`;
    case 'INTERRUPTED':
      return `${c.bold(c.yellow(`INTERRUPTED (exit ${v.exitCode})`))}${v.reasons.length === 0 ? '' : `: thresholds failed so far: ${v.reasons.join('; ')}`} ${where}`;
  }
}

// What "still fails" means for a shrink: the original run's failure (a hang, or else its most frequent error
// class) and the test of one try against it. Pure: takes figures, returns verdicts.

/** The failure a shrink keeps: any hang, or (when the original had errors and no hang) an error of one class. */
export type Failure = { kind: 'hang' } | { kind: 'error'; errorClass: string };

/** What one try (one run of a variant) recorded, as far as the predicate cares. */
export interface TryFigures {
  hangs: number;
  errorsByClass: Readonly<Record<string, number>>;
  /** Rounds (1-based) in which some request hung. */
  hangRounds: readonly number[];
  /** Rounds in which some request ended in an error (of any class). */
  errorRounds: readonly number[];
}

/** A try judged: does it fail the way the original did, and from which round on (null: it passed). */
export interface TryVerdict {
  fails: boolean;
  firstRound: number | null;
}

/** The original run's failure: a hang when it had any; else its most frequent error class (ties: by name);
 * null when it had neither, and there is nothing to shrink. */
export function failureOf(figures: Pick<TryFigures, 'hangs' | 'errorsByClass'>): Failure | null {
  if (figures.hangs > 0) return { kind: 'hang' };
  const classes = Object.entries(figures.errorsByClass)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const top = classes[0];
  return top === undefined ? null : { kind: 'error', errorClass: top[0] };
}

/** Whether one try shows `failure`: ≥ 1 hang, or ≥ 1 error of the class. */
export function judgeTry(failure: Failure, figures: TryFigures): TryVerdict {
  const fails = failure.kind === 'hang' ? figures.hangs > 0 : (figures.errorsByClass[failure.errorClass] ?? 0) > 0;
  if (!fails) return { fails: false, firstRound: null };
  const rounds = failure.kind === 'hang' ? figures.hangRounds : figures.errorRounds;
  return { fails: true, firstRound: rounds.length === 0 ? null : Math.min(...rounds) };
}

/** `a hang`, `a connection_reset error`: the failure in words. */
export function describeFailure(failure: Failure): string {
  return failure.kind === 'hang' ? 'a hang' : `a ${failure.errorClass} error`;
}

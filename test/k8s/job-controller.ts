// What the Kubernetes Job controller decides when one of a Job's pods ends (batch/v1, as documented for
// v1.31+: "Pod failure policy", "Backoff limit per index"), so a test can hold a manifest to its meaning and not
// only to its schema. It models the decision for one ended pod, not the controller's timing: the rules of
// spec.podFailurePolicy in order, the first match acting (FailJob, FailIndex, Ignore, Count); an unmatched
// failure counted; the per-index limit (backoffLimitPerIndex, with maxFailedIndexes) and the Job-wide one
// (backoffLimit: 6 by default, 2147483647 by default when backoffLimitPerIndex is set).
import type { IJobSpec } from 'kubernetes-models/batch/v1/JobSpec';
import type { IPodFailurePolicyRule } from 'kubernetes-models/batch/v1/PodFailurePolicyRule';

/** How a pod ended: its containers' exit codes, and its conditions (e.g. `DisruptionTarget` on an eviction). */
export interface PodEnd {
  exitCodes: Record<string, number>;
  conditions?: readonly string[];
}

/** What the controller does next. */
export type JobDecision =
  /** The index is done (succeeded); no pod of it runs again. */
  | { kind: 'index_succeeded' }
  /** A replacement pod is created for the same index: the shard runs again. */
  | { kind: 'replacement'; rule: string }
  /** The index is marked failed and not restarted; the other indexes go on. */
  | { kind: 'index_failed'; rule: string }
  /** The Job is marked failed and every pod still running is terminated. */
  | { kind: 'job_failed'; rule: string };

/** The Job's failure counters, which the decisions for its pods update. */
export class JobState {
  failed = 0;
  readonly failuresByIndex = new Map<number, number>();
  readonly failedIndexes = new Set<number>();
  constructor(readonly spec: IJobSpec) {
    const rules = spec.podFailurePolicy?.rules ?? [];
    // The API server refuses these; a model that accepted them would answer for a Job that cannot exist.
    if (rules.length > 0 && spec.template.spec?.restartPolicy !== 'Never') throw new Error('podFailurePolicy needs restartPolicy: Never');
    if (rules.some((r) => r.action === 'FailIndex') && spec.backoffLimitPerIndex === undefined) throw new Error('action FailIndex needs backoffLimitPerIndex');
    if (spec.backoffLimitPerIndex !== undefined && spec.completionMode !== 'Indexed') throw new Error('backoffLimitPerIndex needs completionMode: Indexed');
  }

  /** The decision for the pod of `index` that ended as `end`, counters updated. */
  podEnded(index: number, end: PodEnd): JobDecision {
    const codes = Object.values(end.exitCodes);
    if (codes.every((c) => c === 0) && (end.conditions ?? []).length === 0) return { kind: 'index_succeeded' };
    const rule = (this.spec.podFailurePolicy?.rules ?? []).find((r) => matches(r, end));
    const name = rule === undefined ? 'no rule (counted)' : `${rule.action} rule`;
    switch (rule?.action) {
      case 'FailJob':
        return { kind: 'job_failed', rule: name };
      case 'Ignore':
        return { kind: 'replacement', rule: name };
      case 'FailIndex':
        return this.#indexFailed(index, name);
      default:
        return this.#count(index, name);
    }
  }

  #indexFailed(index: number, rule: string): JobDecision {
    this.failedIndexes.add(index);
    const max = this.spec.maxFailedIndexes;
    return max !== undefined && this.failedIndexes.size > max ? { kind: 'job_failed', rule: `${rule}, maxFailedIndexes passed` } : { kind: 'index_failed', rule };
  }

  #count(index: number, rule: string): JobDecision {
    this.failed += 1;
    const perIndex = this.spec.backoffLimitPerIndex;
    const backoffLimit = this.spec.backoffLimit ?? (perIndex === undefined ? 6 : 2147483647);
    if (this.failed > backoffLimit) return { kind: 'job_failed', rule: `${rule}, backoffLimit passed` };
    if (perIndex === undefined) return { kind: 'replacement', rule };
    const failures = (this.failuresByIndex.get(index) ?? 0) + 1;
    this.failuresByIndex.set(index, failures);
    return failures > perIndex ? this.#indexFailed(index, `${rule}, backoffLimitPerIndex passed`) : { kind: 'replacement', rule };
  }
}

/** A rule matches by its containers' exit codes (In: one of the values; NotIn: a non-zero code not among them)
 * or by a condition of the pod. */
function matches(rule: IPodFailurePolicyRule, end: PodEnd): boolean {
  const onCodes = rule.onExitCodes;
  if (onCodes !== undefined) {
    const codes = Object.entries(end.exitCodes)
      .filter(([name]) => onCodes.containerName === undefined || onCodes.containerName === name)
      .map(([, code]) => code);
    return onCodes.operator === 'In' ? codes.some((c) => onCodes.values.includes(c)) : codes.some((c) => c !== 0 && !onCodes.values.includes(c));
  }
  return (rule.onPodConditions ?? []).some((p) => (p.status ?? 'True') === 'True' && (end.conditions ?? []).includes(p.type));
}

// The reduction steps of a shrink, greedy, each keeping what still fails k of k: fewer agents, fewer rounds,
// a smaller context, no think time, one connection, and whether the path (hop or proxy) is needed. Each step
// only proposes shapes; running them k times is the Trial's (search.ts), so the steps are tested with a fake.
import { contextShrinks, type Shape } from './shape.js';
import type { Workload } from '../config/index.js';

export type StepName = 'original' | 'agents' | 'rounds' | 'context' | 'think' | 'connection' | 'path';

/** The smallest shape that failed k of k so far, and the round each of its tries first failed in. */
export interface Best {
  shape: Shape;
  firstRounds: readonly number[];
}

/** A variant proposed by a step: `agents 4 → 2` is step `agents`, from `4`, to `2`. */
export interface Proposal {
  step: StepName;
  from: string;
  to: string;
  shape: Shape;
}

/** A variant's result: `fails` k of k, `passes` (some try passed), or `cut` (time ran out before k tries). */
export interface TrialResult {
  verdict: 'fails' | 'passes' | 'cut';
  firstRounds: readonly number[];
}

/** What the steps need: run a proposal (k tries, stopping at the first pass), say a note, know the time is up. */
export interface Trial {
  run(proposal: Proposal): Promise<TrialResult>;
  note(line: string): void;
  timeUp(): boolean;
}

/** Context divisors tried at most: ÷2 … ÷1024. */
const MAX_CONTEXT_DIVISOR = 1024;

/** Runs `proposal`; the new best when it fails k of k, else null. */
async function keepIfFails(trial: Trial, proposal: Proposal): Promise<Best | null> {
  const result = await trial.run(proposal);
  return result.verdict === 'fails' ? { shape: proposal.shape, firstRounds: result.firstRounds } : null;
}

/** Halves the agents down to 1, stopping at the first half that no longer fails. */
export async function fewerAgents(best: Best, trial: Trial): Promise<Best> {
  let current = best;
  while (current.shape.agents > 1 && !trial.timeUp()) {
    const agents = Math.max(1, Math.floor(current.shape.agents / 2));
    const next = await keepIfFails(trial, { step: 'agents', from: String(current.shape.agents), to: String(agents), shape: { ...current.shape, agents } });
    if (next === null) break;
    current = next;
  }
  return current;
}

/**
 * The fewest rounds that still fail, by binary search. A failure at round R needs at least R rounds, so the
 * search starts at the earliest round the tries failed in (likely the answer, tried first) and ends at the
 * rounds that fail now.
 */
export async function fewerRounds(best: Best, trial: Trial): Promise<Best> {
  let current = best;
  let high = best.shape.rounds;
  let low = best.firstRounds.length === 0 ? 1 : Math.max(1, Math.min(high, ...best.firstRounds));
  if (low > 1 && low < high) trial.note(`rounds: the tries first failed at round ${low} or later, so fewer than ${low} rounds cannot fail as they did`);
  let probe = low;
  while (low < high && !trial.timeUp()) {
    const next = await keepIfFails(trial, { step: 'rounds', from: String(current.shape.rounds), to: String(probe), shape: { ...current.shape, rounds: probe } });
    if (next === null) low = probe + 1;
    else {
      current = next;
      high = probe;
    }
    probe = Math.floor((low + high) / 2);
  }
  return current;
}

/** The divisor past which no conversation size field gets any smaller (every one at its least), at most ÷1024. */
function smallestContextDivisor(conversation: Workload['conversation'], from: number): number {
  let divisor = from;
  while (divisor < MAX_CONTEXT_DIVISOR && contextShrinks(conversation, divisor * 2)) divisor *= 2;
  return divisor;
}

/**
 * A smaller context: first the smallest there is (every size field at its least), kept when it still fails;
 * else every size field halved together (÷2, ÷4, …) while it still fails.
 */
export async function smallerContext(best: Best, trial: Trial, conversation: Workload['conversation']): Promise<Best> {
  const from = best.shape.contextDivisor;
  const least = smallestContextDivisor(conversation, from);
  if (least === from || trial.timeUp()) return best;
  const smallest = await keepIfFails(trial, { step: 'context', from: `÷${from}`, to: `÷${least}`, shape: { ...best.shape, contextDivisor: least } });
  if (smallest !== null) return smallest;
  let current = best;
  for (let divisor = from * 2; divisor < least && !trial.timeUp(); divisor *= 2) {
    const next = await keepIfFails(trial, { step: 'context', from: `÷${divisor / 2}`, to: `÷${divisor}`, shape: { ...current.shape, contextDivisor: divisor } });
    if (next === null) break;
    current = next;
  }
  return current;
}

/** Think time 0, when there is any. */
export async function noThinkTime(best: Best, trial: Trial): Promise<Best> {
  if (best.shape.thinkTimeMs === 0 || trial.timeUp()) return best;
  const next = await keepIfFails(trial, { step: 'think', from: `${best.shape.thinkTimeMs} ms`, to: '0', shape: { ...best.shape, thinkTimeMs: 0 } });
  return next ?? best;
}

/** All agents on one pooled connection (one agent has one already). */
export async function oneConnection(best: Best, trial: Trial): Promise<Best> {
  if (best.shape.agents === 1 || best.shape.oneConnection || trial.timeUp()) return best;
  const next = await keepIfFails(trial, { step: 'connection', from: 'one per agent', to: 'one shared', shape: { ...best.shape, oneConnection: true } });
  return next ?? best;
}

/** The path's part: straight to the target instead of through `via`. `needed` is true when the failure
 * vanishes direct (the path is kept), false when it fails direct too (the path is dropped), null when not
 * tried (no `via`, or no time). */
export async function directPath(best: Best, trial: Trial, via: string | null): Promise<{ best: Best; needed: boolean | null }> {
  if (via === null || best.shape.direct || trial.timeUp()) return { best, needed: null };
  const proposal: Proposal = { step: 'path', from: `via ${via}`, to: 'direct', shape: { ...best.shape, direct: true } };
  const result = await trial.run(proposal);
  if (result.verdict === 'fails') return { best: { shape: proposal.shape, firstRounds: result.firstRounds }, needed: false };
  return { best, needed: result.verdict === 'passes' ? true : null };
}

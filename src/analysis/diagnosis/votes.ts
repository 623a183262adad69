// A piece of evidence and what it weighs: which verdicts it supports, which it speaks against, and how much.
import type { DiagnosisVerdict } from '../../types/index.js';

export type Candidate = Exclude<DiagnosisVerdict, 'none' | 'unknown'>;

export const CANDIDATES: readonly Candidate[] = ['proxy', 'engine', 'engine_overloaded', 'client', 'host_starved', 'network'];

/** Weights: a hint, a clear sign, a comparison that settles the question, the client measuring itself. */
export const WEAK = 1;
export const MEDIUM = 2;
export const STRONG = 3;
/** The client was late through most of the episode: what it measured then (canaries, scrapes, deadlines) is its own delay. */
export const DECISIVE = 4;

export interface Vote {
  for: readonly Candidate[];
  against: readonly Candidate[];
  weight: number;
  text: string;
  /** Verdicts in `for` that this vote supports only by clearing another (the engine was up: so the fault was
   * elsewhere). It adds to their score, but a verdict needs one vote that speaks for it in its own right:
   * "the engine was fine" alone never makes a proxy or a network verdict. */
  byElimination: readonly Candidate[];
}

/** What one source of evidence says about an episode: weighed votes, and plain facts. */
export interface Signal {
  votes: Vote[];
  facts: string[];
}

export function vote(weight: number, text: string, forVerdicts: readonly Candidate[], against: readonly Candidate[] = [], byElimination: readonly Candidate[] = []): Vote {
  return { for: forVerdicts, against, weight, text, byElimination };
}

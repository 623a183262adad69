// A piece of evidence and what it weighs: which verdicts it supports, which it speaks against, and how much —
// a log-likelihood ratio in bits, summed per verdict (docs/diagnosis.md, "The model").
import { DIAGNOSIS_CANDIDATES, type DiagnosisCandidate } from '../../types/index.js';

/** A verdict the diagnosis scores; the list and its order are types/verdicts.ts's. */
export type Candidate = DiagnosisCandidate;
export const CANDIDATES: readonly Candidate[] = DIAGNOSIS_CANDIDATES;

/**
 * A vote's weight is a log-likelihood ratio in bits: how many times more likely the observation is when the
 * verdicts it is for hold than when they do not (1 bit: twice, 2 bits: 4 times…). The signals' fixed weights
 * are judgements of that ratio for an observation kind that has no sample behind it: a hint (2:1), a clear
 * sign (4:1), a comparison or a fact that settles the question (8:1), the client measuring itself (16:1).
 * Measured votes (canary latency, request features) compute theirs from their data (stats.ts creditedBits)
 * and carry its standard error.
 */
export const WEAK = 1;
export const MEDIUM = 2;
export const STRONG = 3;
/** The client was late through most of the episode: what it measured then (canaries, scrapes, deadlines) is its own delay. */
export const DECISIVE = 4;

export interface Vote {
  for: readonly Candidate[];
  against: readonly Candidate[];
  /** The log-likelihood ratio in bits (see WEAK…DECISIVE): added to each verdict in `for`, taken from each in `against`. */
  weight: number;
  /** A measured vote's standard error of `weight`, in bits (absent: a fixed weight). */
  se?: number;
  text: string;
  /** Verdicts in `for` that this vote supports only by clearing another (the engine was up: so the fault was
   * elsewhere). It adds to their score, but a verdict needs one vote that speaks for it in its own right:
   * "the engine was fine" alone never makes a proxy or a network verdict. */
  byElimination: readonly Candidate[];
  /** It speaks against the engine only because the engine was alive (it answered, work flowed): no word
   * against it once the engine is seen holding the failed request itself (`holds`). */
  alive?: boolean;
  /** The engine's own gauges hold the failed request (it is alive and yet the culprit): where, as
   * `prefill's inflight queue (…)`. */
  holds?: string;
  /** The engine answered the failed requests itself with its own error: alive, and yet the culprit, as with `holds`. */
  answered?: true;
  /** The engine was measured slow on exactly the kind of request that failed (their size): alive, and yet the
   * culprit, as with `holds`; says which measurement. */
  selective?: string;
  /** The path is seen holding the agents' answers (made by the engine, never delivered): small answers, such as
   * canaries', pass it, so their passing no longer clears it (see weighAlive). */
  heldOnPath?: true;
  /** The path ended the failed requests itself, at its own timeout (see weighCut). */
  cuts?: true;
  /** It speaks only of a slow engine, which the path's timeout turned into failures: stated, not weighed. */
  contributing?: true;
  /** It shows the engine at work — work flowing, or requests in its queue: slow, not stopped (see weighCut). */
  busy?: true;
}

/** What one source of evidence says about an episode: weighed votes, and plain facts. */
export interface Signal {
  votes: Vote[];
  facts: string[];
}

/** A vote against the engine that says only that it was alive (see Vote.alive). */
export function aliveVote(v: Vote): Vote {
  return { ...v, alive: true };
}

/** Once some vote shows the engine holding the failed request, answering it with its own error, or slow on
 * exactly the failed requests' kind, being alive no longer clears it — nor, then, points anywhere else. Once
 * some vote shows the path holding the agents' answers, small requests passing no longer clear the path: that
 * vote already weighed them (its premise), and they are not counted twice. */
export function weighAlive(votes: readonly Vote[]): Vote[] {
  return clearEngine(votes.some((v) => v.heldOnPath === true) ? votes.map(notClearingPath) : votes);
}

function notClearingPath(v: Vote): Vote {
  if (v.alive !== true || !v.against.includes('proxy')) return v;
  return { ...v, against: v.against.filter((c) => c !== 'proxy'), text: `${v.text} (which does not clear the proxy: it held only the agents' answers)` };
}

function clearEngine(votes: readonly Vote[]): Vote[] {
  const why = votes.some((v) => v.holds !== undefined)
    ? 'it holds the failed request'
    : votes.some((v) => v.answered === true)
      ? 'it answered the failed requests with its own error'
      : votes.find((v) => v.selective !== undefined)?.selective;
  if (why === undefined) return [...votes];
  // Not cleared, the engine leaves nothing to eliminate: what the vote named by elimination alone goes too.
  return votes.map((v) =>
    v.alive === true && v.against.includes('engine')
      ? {
          ...v,
          for: v.for.filter((c) => !v.byElimination.includes(c)),
          against: v.against.filter((c) => c !== 'engine'),
          byElimination: [],
          text: `${v.text} (alive, which does not clear it: ${why})`,
        }
      : v,
  );
}

export function vote(weight: number, text: string, forVerdicts: readonly Candidate[], against: readonly Candidate[] = [], byElimination: readonly Candidate[] = []): Vote {
  return { for: forVerdicts, against, weight, text, byElimination };
}

/**
 * Once the path is seen cutting the failed requests at its own timeout, what says only that the engine was
 * slow is a contributing fact, not a rival call: it explains why the requests were long enough to meet the
 * path's clock, and the clock ended them. Votes for `engine_overloaded` lose it (and their word against the
 * proxy). Those that said "slow or stopped" alike (both canary legs failing, a 504 page) become contributing
 * too while the engine is seen at work (`busy`: work flowed, or its queue held requests); with nothing
 * showing it at work they count for `engine`: requests that never touch the proxy failing as often as those
 * through it say the engine did not answer, and the cut is the proxy's timeout firing on it. What says the engine stopped (silent scrapes,
 * nothing flowing, a pinned gauge, a held request, its watchdog line) still counts for `engine`.
 */
export function weighCut(votes: readonly Vote[]): Vote[] {
  if (!votes.some((v) => v.cuts === true)) return [...votes];
  const busy = votes.some((v) => v.busy === true);
  return votes.map((v): Vote => {
    if (!v.for.includes('engine_overloaded')) return v;
    const rest = v.for.filter((c) => c !== 'engine_overloaded');
    // Slow or stopped alike, or slow and nothing else (no verdict of its own left, no word but against the proxy).
    const slowOnly = rest.every((c) => v.byElimination.includes(c)) && v.against.every((c) => c === 'proxy');
    if (rest.includes('engine') && !busy) return { ...v, for: rest };
    if (rest.includes('engine') || slowOnly) {
      return { ...v, for: [], against: [], byElimination: [], contributing: true };
    }
    return { ...v, for: rest, against: v.against.filter((c) => c !== 'proxy') };
  });
}

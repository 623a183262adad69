// What the other signals saw of the engine over an episode — failing, healthy, or not seen — so a proxy's
// own error page can be read against it: a page says the proxy got no answer, not on whose side the fault lies.
import type { Vote } from './votes.js';
import { MEDIUM } from './votes.js';

export type EngineHealth =
  /** Something says the engine itself failed: silent scrapes, nothing flowing, direct canaries failing, a held request, its log. */
  | { seen: 'failing'; by: string }
  /** Something says the engine answered: `settled` by direct canaries or moving counters, else only by answered scrapes or completions. */
  | { seen: 'healthy'; settled: boolean; by: string }
  | { seen: 'unseen' };

/**
 * The engine's health from the votes of the signals that look at it (canaries, scrapes and flow, its log).
 * A clear sign (MEDIUM or more) for the engine in its own right makes it failing, whatever else answered:
 * a frozen scheduler can still answer /metrics. Otherwise any word against it makes it healthy.
 */
export function engineHealth(votes: readonly Vote[]): EngineHealth {
  const failing = votes.find((v) => v.weight >= MEDIUM && v.for.includes('engine') && !v.byElimination.includes('engine'));
  if (failing !== undefined) return { seen: 'failing', by: failing.text };
  const healthy = votes.filter((v) => v.against.includes('engine')).sort((a, b) => b.weight - a.weight)[0];
  if (healthy !== undefined) return { seen: 'healthy', settled: healthy.weight >= MEDIUM, by: healthy.text };
  return { seen: 'unseen' };
}

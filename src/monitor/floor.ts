// A queue gauge's floor over time: the level it never went below after stepping up to it. A floor that steps
// up by one and stays while the value rotates above it is one request stuck under load (the incident's other
// half); this finds the step and the run's failed or slow requests whose lives match it. Pure.
import { baseName, type GaugeFloor } from '../types/index.js';
import type { ClientActivity, FloorRun, GaugeSeries, HeldRequest } from './series.js';
import { isHandoffQueue } from './select.js';

/** Queue gauges: requests waiting somewhere (SGLang's waiting, grammar and PD hand-off queues, vLLM's waiting
 * queue, llama.cpp's deferred). A running-batch gauge is not one: SGLang's prefill reports ≥ 1 there always. */
export function isQueueGauge(name: string): boolean {
  return /queue|waiting|deferred/.test(baseName(name));
}

/** A request sent this long before the step still matches it (it reaches the queue after prefill). */
const LEAD_SCRAPES = 2;
const LEAD_MIN_MS = 1000;

/**
 * The floor that stepped up during the run and held, with the requests that match it: the highest level whose
 * step some failed or slow request matches, else the highest that held at least `pinMs` (a caveat, not a pin).
 * A step held at least `pinMs` matches any such request; on a hand-off queue a shorter one matches a request
 * it outlived while the value rotated above it. Null when no floor stepped up and held.
 */
export function heldFloor(s: GaugeSeries, client: ClientActivity, pinMs: number, intervalMs: number): GaugeFloor | null {
  const runs = [...s.floorRuns, ...s.floorOpen.filter((r): r is FloorRun => r !== null)].filter((r) => r.stepped);
  const toleranceMs = Math.max(LEAD_MIN_MS, LEAD_SCRAPES * intervalMs);
  // On a hand-off queue a request passes in a KV transfer's time: a floor held there through a failed
  // request's whole life, while others pass above it, is that request whatever the pin threshold.
  const handoff = isHandoffQueue(s.name);
  const judged = runs.map((r) => {
    const candidates = matching(r, client.held, pinMs, toleranceMs);
    const long = heldMs(r, s) >= pinMs;
    const outlived = handoff && r.returns >= 1 ? candidates.filter((h) => h.endMs <= (r.toMs ?? s.lastMs) + toleranceMs) : [];
    const requests = long ? candidates : outlived;
    // More failures within reach of one step than the step's height is load, not one stuck request: judged on
    // every failure in reach, before each is tied to the one step it caused (a backlog's many hung requests,
    // spread over its steps, would otherwise each look like a step's own).
    return { r, long, requests, load: requests.length > r.level };
  });
  // A request is the step it caused, not every step within reach of its send: the load stepping the floor
  // higher later on (a level above it held a while) is not when it went in.
  const caused = new Map(
    client.held.map((h) => [
      h,
      causedStep(
        h,
        judged.filter((j) => j.requests.includes(h)).map((j) => j.r),
      ),
    ]),
  );
  for (const j of judged) j.requests = j.requests.filter((h) => caused.get(h) === j.r);
  const matched = judged.filter((j) => !j.load && j.requests.length > 0 && j.requests.length <= j.r.level);
  const pool = matched.length > 0 ? matched : judged.filter((j) => j.long).map((j) => ({ ...j, requests: [] as HeldRequest[] }));
  const best = pool.sort((a, b) => b.r.level - a.r.level || heldMs(b.r, s) - heldMs(a.r, s))[0];
  if (best === undefined) return null;
  return {
    level: best.r.level,
    from_ms: Math.round(best.r.fromMs),
    to_ms: best.r.toMs === null ? null : Math.round(best.r.toMs),
    held_s: Math.round(heldMs(best.r, s) / 100) / 10,
    returns: best.r.returns,
    above_samples: best.r.above,
    requests: best.requests.map((h) => ({ start_ms: Math.round(h.startMs), end_ms: Math.round(h.endMs), status: h.status, phase: h.phase })),
  };
}

/**
 * The step a request caused, among the floor runs it matches: the first one seen from its send on (a step seen
 * before it was sent is not its doing), else the last one before it (the floor it joined while load held the
 * gauge there).
 */
function causedStep(h: HeldRequest, runs: readonly FloorRun[]): FloorRun | undefined {
  const after = runs.filter((r) => r.fromMs >= h.startMs).sort((a, b) => a.fromMs - b.fromMs || a.level - b.level)[0];
  return after ?? [...runs].sort((a, b) => b.fromMs - a.fromMs || b.level - a.level)[0];
}

/** How long a floor run held: to its last sample at or above the level (to the series' last sample while open). */
function heldMs(r: FloorRun, s: GaugeSeries): number {
  return (r.toMs === null ? s.lastMs : r.lastMs) - r.fromMs;
}

/**
 * Requests whose lives match a step: sent from a little before the pin threshold ahead of it up to shortly
 * after it (it reaches a hand-off queue after prefill), no token back (a request in a queue streams nothing),
 * and, when the floor came down again, an ok one must have ended with it (a slow request released).
 */
function matching(r: FloorRun, held: readonly HeldRequest[], pinMs: number, toleranceMs: number): HeldRequest[] {
  return held.filter((h) => {
    if (h.startMs < r.fromMs - pinMs || h.startMs > r.fromMs + toleranceMs) return false;
    if (h.status !== 'ok') return !h.streamed;
    return r.toMs !== null && Math.abs(h.endMs - r.toMs) <= toleranceMs;
  });
}

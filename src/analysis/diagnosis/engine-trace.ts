// A fact from the embedded engine's own trace of a hung request (its spans are in-process): where that trace
// ends — "the hung request's trace ends in decode_waiting (the decode server's prealloc and transfer queues)
// at 12.3 s" — put beside the gauge evidence
// of the episode the hang belongs to, and in the evidence. A fact, weighed for no verdict.
import { engineStageMeaning, type Diagnosis } from '../../types/index.js';

/** Where the engine's trace of one request ends: its last stage on the last server it reached. */
export interface EngineTraceEnd {
  trace_id: string;
  /** `engine-decode`, `engine-prefill`, `engine-router`, `engine`. */
  server: string;
  /** The stage it was in (`decode_waiting`, types/engine-stages.ts), or null when it had none. */
  stage: string | null;
  /** Run ms where the stage began, and where the trace ends (the stage's end, or the engine's stop). */
  stage_from_ms: number | null;
  at_ms: number;
  /** Still in that stage when the engine stopped. */
  open: boolean;
  /** Why its span ended badly (cancelled, failed, open at the stop); null when it did not. */
  error: string | null;
}

/** A hung request as the summary knows it: its trace, its id, when the watchdog gave up on it (run ms). */
export interface HungTrace {
  trace_id: string;
  request_id: string | null;
  detected_ms: number;
}

/** Hung requests given a fact, per episode. */
const MAX_FACTS = 3;

/** `diagnosis` with a fact for each hung request whose engine trace is known, in its episode and the evidence. */
export function withEngineTraceFacts(diagnosis: Diagnosis, hung: readonly HungTrace[], ends: readonly EngineTraceEnd[]): Diagnosis {
  if (hung.length === 0 || ends.length === 0) return diagnosis;
  const byTrace = new Map(ends.map((e) => [e.trace_id, e]));
  const episodes = (diagnosis.episodes ?? []).map((ep) => {
    if (ep.kind !== 'hangs') return ep;
    const facts = hung
      .filter((h) => h.detected_ms >= ep.start_ms && h.detected_ms <= ep.end_ms + 1)
      .flatMap((h) => {
        const end = byTrace.get(h.trace_id);
        return end === undefined ? [] : [engineTraceFact(h, end)];
      })
      .slice(0, MAX_FACTS);
    return facts.length === 0 ? ep : { ...ep, facts: [...ep.facts, ...facts] };
  });
  const added = episodes.flatMap((ep, i) => ep.facts.slice(diagnosis.episodes?.[i]?.facts.length ?? 0));
  if (added.length === 0) return diagnosis;
  return { ...diagnosis, evidence: [...diagnosis.evidence, ...added], episodes };
}

/** `the hung request "rl-…" (trace 4bf9…): the engine's trace ends in decode_waiting (the decode server's prealloc
 * and transfer queues …) (engine-decode), in it from 2.1 s until the engine stopped at 12.3 s`, or, for a stage
 * that ended, `… ends in decode_forward (decoding …) at 12.3 s (engine-decode, in it since 2.1 s: cancelled: the
 * client went away)`. */
export function engineTraceFact(h: HungTrace, end: EngineTraceEnd): string {
  const who = `the hung request${h.request_id === null ? '' : ` ${JSON.stringify(h.request_id)}`} (trace ${h.trace_id})`;
  const meaning = end.stage === null ? null : engineStageMeaning(end.stage);
  const where = end.stage === null ? `on ${end.server}` : `in ${end.stage}${meaning === null ? '' : ` (${meaning})`}`;
  if (end.open) {
    const from = end.stage_from_ms === null ? '' : ` from ${seconds(end.stage_from_ms)}`;
    return `${who}: the engine's trace ends ${where} (${end.server}), in it${from} until the engine stopped at ${seconds(end.at_ms)}`;
  }
  const since = end.stage_from_ms === null ? '' : `, in it since ${seconds(end.stage_from_ms)}`;
  return `${who}: the engine's trace ends ${where} at ${seconds(end.at_ms)} (${end.server}${since}${end.error === null ? '' : `: ${end.error}`})`;
}

function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

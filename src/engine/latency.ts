// The latency model's two costs, computed in one place: a decode step (one token for every running stream) and a
// prefill batch. Both divide by the start's run speed factor (run-speed.ts), so a faster start has shorter steps.
import type { EngineSettings } from '../config/index.js';

/** One decode step with `running` streams in the batch, in ms. */
export function decodeStepMs(settings: EngineSettings, running: number, speedFactor: number): number {
  return (settings.decode_step_ms + settings.decode_step_ms_per_running * running) / settings.decode_speedup / speedFactor;
}

/** One prefill batch of `uncachedTokens` (a prefix-cache hit costs nothing), in ms. */
export function prefillBatchMs(settings: EngineSettings, uncachedTokens: number, speedFactor: number): number {
  return ((uncachedTokens / 1000) * settings.prefill_ms_per_1k_tokens) / speedFactor;
}

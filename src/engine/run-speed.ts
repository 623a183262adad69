// The run-to-run spread of a deployment's speed (`engine.run_spread_pct`): a real server restarted, or placed on
// other GPUs, runs a few percent faster or slower than last time, and stays so until its next restart. One factor
// is drawn per start of the engine; prefill and decode run that many times as fast for the deployment's life.
import { randomInt } from 'node:crypto';
import { Rng } from '../util/index.js';

/** z is clamped to ±3 standard deviations: a spread describes restarts, not a broken card. */
const Z_LIMIT = 3;
/** A deployment never runs slower than half its modelled speed, however wide the spread. */
const FACTOR_FLOOR = 0.5;

/** One start's draw. */
export interface RunSpeed {
  /** Multiplies prefill and decode throughput (divides their per-token times); exactly 1 without a spread. */
  readonly factor: number;
  /** The `engine.run_spread_pct` it was drawn with. */
  readonly spreadPct: number;
  /** The seed it was drawn from (null without a spread): `engine.run_spread_seed` set to it draws it again. */
  readonly seed: number | null;
}

/**
 * The factor of one engine start: f = 1 + spreadPct/100 · z, z standard normal from `seed` (a fresh random
 * 32-bit seed when null), clamped to ±3, f at least 0.5. A spread of 0 is exactly 1 and draws nothing.
 */
export function drawRunSpeed(spreadPct: number, seed: number | null): RunSpeed {
  if (spreadPct === 0) return { factor: 1, spreadPct, seed: null };
  const used = seed ?? randomInt(0, 0x1_0000_0000);
  const z = Math.max(-Z_LIMIT, Math.min(Z_LIMIT, standardNormal(Rng.from('run-speed', used))));
  return { factor: Math.max(FACTOR_FLOOR, 1 + (spreadPct / 100) * z), spreadPct, seed: used };
}

/** Box–Muller: one standard normal from two uniform draws. */
function standardNormal(rng: Rng): number {
  const u1 = 1 - rng.next(); // (0, 1]: the log stays finite
  const u2 = rng.next();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** `run speed ×0.9731 (engine.run_spread_pct 3, run_spread_seed 1234567)`: where the engine logs how it starts. */
export function runSpeedText(speed: RunSpeed): string {
  return `run speed ×${speed.factor.toFixed(4)} (engine.run_spread_pct ${speed.spreadPct}, run_spread_seed ${speed.seed ?? 'none'})`;
}

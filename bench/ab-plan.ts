// `npm run bench -- ab-plan [--sequences N]`: is `ab --plan`'s forecast of the pairs a figure needs right? For
// pair differences of a known spread σ (normal, % of A), the plan's forecast (src/compare/ab-plan.ts
// `settledAt`: the fewest pairs at which no difference would be called equivalent, and a difference of twice
// min_effect better) beside the stopping rule itself (src/compare/sequential.ts `sequentialCall`, the call `ab`
// makes after every pair) run on simulated sequences: the median pairs it took to settle an A/A as equivalent,
// and a true +2 × min_effect as better, with the share settled within max_pairs. The forecast is made at the
// true σ and, as `ab --plan` makes it, from a 2-pair pilot's σ (its median and 10-90% range over the
// sequences). The claim: at the true σ, the forecast is within a factor of 1.5 of the median pairs the rule
// took, in every cell where the rule settles most sequences (exit 1 otherwise). About 30 s.
import { forecastSd, settledAt } from '../src/compare/ab-plan.js';
import { MIN_PAIRS, sequentialCall } from '../src/compare/sequential.js';
import { mean, sampleSd } from '../src/compare/stats.js';
import { Rng } from '../src/util/index.js';

function gauss(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

/** Pairs the rule took to make `wanted` on differences of mean `effect` and spread `sd`; null when it did not. */
function pairsTaken(rng: Rng, effect: number, sd: number, margin: number, maxPairs: number, wanted: string): number | null {
  const d: number[] = [];
  for (let n = 1; n <= maxPairs; n += 1) {
    d.push(effect + sd * gauss(rng));
    const call = sequentialCall(d, { minEffect: margin, maxPairs, betterWhen: 'higher', final: n === maxPairs });
    if (call.verdict === wanted) return n;
    if (call.verdict !== 'undecided') return null;
  }
  return null;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
};
const quantile = (xs: readonly number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/** The forecast for one call: equivalence for an A/A, better/worse for an effect; null when not within max_pairs. */
function forecast(sd: number, margin: number, maxPairs: number, effect: boolean): number | null {
  const at = settledAt(sd, margin, maxPairs);
  return effect ? at.effect : at.equivalent;
}

export function abPlanBench(args: string[]): number {
  const at = args.indexOf('--sequences');
  const sequences = at === -1 ? 2000 : Number(args[at + 1]);
  if (!Number.isInteger(sequences) || sequences < 10) {
    process.stderr.write('usage: npm run bench -- ab-plan [--sequences N]\n');
    return 2;
  }
  const started = Date.now();
  const margin = 3;
  const lines = [
    `ab --plan's forecast against the stopping rule, min_effect ±${margin}%, ${sequences} simulated sequences a cell`,
    '',
    '| truth | σ of a pair difference | max_pairs | forecast at the true σ | forecast from a 2-pair pilot: median (10-90%) | the rule: median pairs (settled within max_pairs) | forecast ÷ median |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  let off = 0;
  for (const effect of [0, 2 * margin])
    for (const [sd, maxPairs] of [
      [1, 10],
      [2, 10],
      [3, 20],
      [4, 30],
      [5, 40],
    ] as const) {
      const rng = Rng.from('ab-plan', effect, sd, maxPairs);
      const wanted = effect === 0 ? 'equivalent' : 'better';
      const taken: number[] = [];
      const fromPilot: number[] = [];
      for (let k = 0; k < sequences; k += 1) {
        const n = pairsTaken(rng, effect, sd, margin, maxPairs, wanted);
        if (n !== null) taken.push(n);
        const pilot = [effect + sd * gauss(rng), effect + sd * gauss(rng)];
        fromPilot.push(forecast(forecastSd(sampleSd(pilot, mean(pilot)), pilot.length), margin, maxPairs, effect !== 0) ?? Infinity);
      }
      const truth = forecast(sd, margin, maxPairs, effect !== 0);
      const m = median(taken);
      const settled = taken.length / sequences;
      const ratio = truth === null ? NaN : truth / m;
      const judged = settled >= 0.5;
      if (judged && !(ratio >= 1 / 1.5 && ratio <= 1.5)) off += 1;
      const pilotText = (v: number) => (Number.isFinite(v) ? String(v) : `> ${maxPairs}`);
      lines.push(
        `| ${effect === 0 ? 'A/A → equivalent' : `+${effect}% → better`} | ${sd}% | ${maxPairs} | ${truth ?? `> ${maxPairs}`} | ${pilotText(median(fromPilot))} (${pilotText(quantile(fromPilot, 0.1))}-${pilotText(quantile(fromPilot, 0.9))}) | ${m} (${(100 * settled).toFixed(0)}%) | ${judged ? ratio.toFixed(2) : `— (settled in ${(100 * settled).toFixed(0)}%)`} |`,
      );
    }
  lines.push(
    '',
    `${((Date.now() - started) / 1000).toFixed(0)} s; ${off === 0 ? `every forecast at the true σ within a factor of 1.5 of the rule's median (from ${MIN_PAIRS} pairs on)` : `${off} forecast${off === 1 ? '' : 's'} off by more than 1.5×`}`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  return off === 0 ? 0 : 1;
}

// From a run with a hang or an error to a reproducer another team runs without roundload (repro.mjs, repro.sh).
export { writeRepro, planRepro, type ReproOptions, type ReproOutcome } from './write.js';
export { pickSequence, type ReproSequence, type ReproRequest, type ReproFailure } from './pick.js';
export type { ReproPlan } from './plan.js';

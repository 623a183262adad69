// From a run with a hang or an error to a reproducer another team runs without roundload (repro.mjs, repro.sh).
export { writeRepro } from './write.js';
export { pickSequence } from './pick.js';

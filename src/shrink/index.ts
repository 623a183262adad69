// Shrinking a failing workload (`roundload shrink`): the failure predicate, the reduction steps, the search
// loop with its runner injected, the real runner, and what the shrink says and writes.
export { failureOf, describeFailure, type Failure } from './predicate.js';
export { shapeOf, applyShape } from './shape.js';
export { shrinkWorkload, type ShrinkOptions, type VariantRunner, type TryRequest, type TryResult } from './search.js';
export { realRunner, figuresOf } from './runner.js';
export { answerLine, variantsTable, shrunkHeader, shrinkLog } from './report.js';

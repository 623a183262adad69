// A/B statistics and arms, runs as the unit: reading runs back, reducing each to one value per figure and
// phase, comparing arms across runs (paired or Welch) with the four calls, the table and compare.html, and the
// ab file (arms run alternately, judged by one rule). Import only this file.
export { loadRun, type RunData, type RunWindow } from './load.js';
export { compareArms, type Arm, type Comparison } from './compare.js';
export { DEFAULT_MIN_EFFECT_PCT, DEFAULT_MIN_EFFECT_POINTS } from './across-runs.js';
export { formatComparison, comparisonHtml } from './format.js';
export { comparisonCharts, type ArmPair } from './charts.js';
export { workloadHash, identityDifferences } from './identity.js';
export { runAb, abOrder, abSecrets, steadyTokensPerS, waitHealthy } from './ab.js';
export { runShell } from './shell.js';
export { abJunit, ruleText, type AbSummary } from './ab-output.js';
export { planAb } from './ab-plan.js';
export { readAbPairs } from './ab-folder.js';

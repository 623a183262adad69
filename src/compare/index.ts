// A/B statistics and arms: reading runs back, comparing arms phase by phase with block-bootstrap intervals
// over time windows, the table and compare.html, and the ab file (arms run alternately). Import only this file.
export { loadRun, type RunData, type RunWindow } from './load.js';
export { compareArms, type Arm, type Comparison } from './compare.js';
export { formatComparison, comparisonHtml } from './format.js';
export { comparisonCharts, type ArmPair } from './charts.js';
export { workloadHash, identityDifferences } from './identity.js';
export { runAb, abOrder, abSecrets, steadyTokensPerS, waitHealthy } from './ab.js';
export { runShell } from './shell.js';
export { sequentialLines } from './ab-sequential.js';
export { sequentialJunit, type SequentialRun } from './sequential-output.js';
export { planAb } from './ab-plan.js';
export { readAbPairs } from './ab-folder.js';

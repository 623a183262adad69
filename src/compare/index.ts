// A/B statistics and arms: reading runs back, comparing arms phase by phase with block-bootstrap intervals
// over time windows, the table and compare.html, and the ab file (arms run alternately). Import only this file.
export { loadRun, type RunData, type RunPhase, type RunWindow } from './load.js';
export { compareArms, checkSameWorkload, FIGURES, MIN_STEADY_WINDOWS, type Arm, type Comparison, type PhaseComparison, type FigureRow, type Figure, type CompareOptions } from './compare.js';
export { formatComparison, comparisonHtml, type ComparisonHtmlOptions } from './format.js';
export { comparisonCharts, forestPlots, armSeries, type ArmPair, type PhaseCharts } from './charts.js';
export { workloadHash, workloadIdentity, identityDifferences } from './identity.js';
export { bootstrapDelta, verdictOf, MAX_INTERVAL_WIDTH, type Verdict, type DeltaEstimate } from './stats.js';
export { runAb, abOrder, abSecrets, steadyTokensPerS, waitHealthy, type AbOptions, type AbResult, type AbRun } from './ab.js';
export { runShell, type ShellResult } from './shell.js';

// What people read: the terminal summary, the live progress line (and later the HTML report and JUnit).
export { formatSummary } from './table.js';
export { progressLine, type ProgressLine } from './progress.js';

// The commands cli.ts wires to commander: one function per sub-command, each returning its exit code or
// throwing a RoundloadError that cli.ts maps to one.
export { runCommand, type RunCommandOptions } from './run.js';
export { engineCommand } from './engine.js';
export { validateCommand } from './validate.js';
export { compareCommand } from './compare.js';
export { abCommand } from './ab.js';
export { mergeCommand } from './merge.js';
export { reportCommand } from './report.js';
export { hopCommand } from './hop.js';
export { recordCommand, type RecordCommandOptions } from './record.js';
export { traceImportCommand, traceShowCommand } from './trace.js';
export { historyLsCommand, historyShowCommand, historyImportCommand, historyExportCommand, type HistoryLsOptions } from './history.js';
export { trendCommand, type TrendCommandOptions } from './trend.js';
export { probePathCommand, type ProbePathCommandOptions } from './probe-path.js';
export { shrinkCommand, type ShrinkCommandOptions } from './shrink.js';
export { reproCommand, type ReproCommandOptions } from './repro.js';

// The results folder: layout, line-atomic JSONL writers and readers, atomic JSON files.
export { readJsonl, type JsonlReadResult } from './jsonl.js';
export { RotatingJsonlWriter, jsonlParts, jsonlLines, partPath, type RotationOptions } from './rotate.js';
export { ResultsWriter, type WriterSample, type WriterCloseResult } from './writer.js';
export { RESULT_FILES, createRunFolder, resultPath, writeJsonAtomic, writeJsonLastResort, writeTextAtomic, type ResultFile } from './folder.js';
export { fsFailure, onResultsFs, toResultsError } from './fs-error.js';
export { readManifest, assertRunFolder, readJsonlFile, describeSkipped, isKindLine, type RunManifest, type JsonlFileReport, type SkippedLine, type SkipReason } from './read.js';
export { rebuildSummary, isRequestRecord, isScrapeEvent, type RebuildResult } from './rebuild.js';
export { mergeRuns, firstDifference, type MergeOptions, type MergeResult, type ShardInfo } from './merge.js';

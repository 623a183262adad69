// The results folder: layout, line-atomic JSONL writers, the JSONL reader, atomic JSON files.
export { RotatingJsonlWriter, jsonlParts } from './rotate.js';
export { ResultsWriter, type WriterSample, type WriterCloseResult } from './writer.js';
export { RESULT_FILES, createRunFolder, resultPath, writeJsonAtomic, writeJsonLastResort, writeTextAtomic } from './folder.js';
export { onResultsFs } from './fs-error.js';
export { readManifest, readSummary, readJsonlFile, describeSkipped, isKindLine, type RunManifest } from './read.js';
export { rebuildSummary, isRequestRecord, isScrapeEvent, readRequestRecords, readKindLines } from './rebuild.js';
export { mergeRuns } from './merge.js';

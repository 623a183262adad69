// The results folder: layout, line-atomic JSONL writers and the line format, and for each file its one writer and
// its one reader (run.json: manifest.ts; summary.json: summary-file.ts; histograms.json: histograms-file.ts;
// requests.jsonl, events.jsonl, gauges.jsonl: records.ts over read.ts).
export { RotatingJsonlWriter, jsonlParts } from './rotate.js';
export { ResultsWriter, type WriterSample, type WriterCloseResult } from './writer.js';
export { createRunFolder, resultPath, shownEntries, usedEntries, writeJsonAtomic, writeTextAtomic } from './folder.js';
export { onResultsFs } from './fs-error.js';
export { resultsLine } from './line.js';
export { readJsonlFile, describeSkipped, isKindLine } from './read.js';
export { readManifest, writeManifest, type RunManifest, type RunManifestFile } from './manifest.js';
export { readSummary, readSummaryIfWritten, writeSummary } from './summary-file.js';
export { writeHistograms } from './histograms-file.js';
export { isRequestRecord, isScrapeEvent, readRequestRecords, readKindLines } from './records.js';
export { rebuildSummary } from './rebuild.js';
export { mergeRuns } from './merge.js';

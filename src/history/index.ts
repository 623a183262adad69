// The runs database: a SQLite file (better-sqlite3, loaded on first use) that every run can append to, with
// runs imported from results folders, listed, shown and exported. Import only this file.
export { openHistory, withHistory, type Db } from './open.js';
export { SCHEMA_VERSION } from './schema.js';
export type { Row } from './record.js';
export { historyRunFromFolder } from './folder.js';
export { appendRun } from './append.js';
export { listRuns, findRun, runDetail, phasePoints, phaseNames, type RunRow, type RunFilter, type PhasePoint } from './query.js';
export { historyCsv } from './export.js';

// The history database's schema: a list of migrations, each taking the file one version up. The version is
// SQLite's own `PRAGMA user_version`; `PRAGMA application_id` marks the file as a roundload history, so any
// other SQLite file is refused instead of being written into. docs/history.md documents every table.

/** 'rldh' as a 32-bit integer: `PRAGMA application_id` of every roundload history file. */
export const HISTORY_APPLICATION_ID = 0x726c6468;

/** Migration i takes a file from version i to i + 1. Append only: a released migration never changes, so each is
 * written out in full (never built from a list that may grow). A figure given a history column in types/figures.ts
 * needs it added here by a new migration (`ALTER TABLE figures ADD COLUMN …`): test/types/figures.test.ts checks
 * the latest schema has every figure's column, and test/history/database.test.ts writes a run with every figure
 * into a database of every earlier version. */
export const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  started_at TEXT,
  ended_at TEXT,
  status TEXT NOT NULL,
  verdict TEXT NOT NULL,
  exit_code INTEGER NOT NULL,
  target TEXT,
  path TEXT,
  model TEXT,
  labels TEXT NOT NULL,
  versions TEXT NOT NULL,
  host TEXT,
  workload_hash TEXT,
  dir TEXT,
  wall_s REAL,
  requests INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  hangs INTEGER NOT NULL,
  error_rate REAL,
  output_tokens_per_s REAL,
  requests_per_s REAL,
  thresholds_ok INTEGER NOT NULL,
  diagnosis TEXT,
  diagnosis_confidence REAL,
  added_at TEXT NOT NULL
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE TABLE figures (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  phase TEXT NOT NULL,
  round INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  hangs INTEGER NOT NULL,
  output_tokens_per_s REAL,
  stream_tokens_per_s REAL,
  ttft_p50_ms REAL,
  ttft_p90_ms REAL,
  ttft_p99_ms REAL,
  ttfc_p50_ms REAL,
  ttfc_p90_ms REAL,
  ttfc_p99_ms REAL,
  itl_p50_ms REAL,
  itl_p90_ms REAL,
  itl_p99_ms REAL,
  tpot_p50_ms REAL,
  tpot_p90_ms REAL,
  tpot_p99_ms REAL,
  e2e_p50_ms REAL,
  e2e_p90_ms REAL,
  e2e_p99_ms REAL,
  PRIMARY KEY (run_id, phase, round)
);
CREATE TABLE failures (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  class TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (run_id, kind, class)
);
CREATE TABLE gauges (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  target TEXT NOT NULL,
  name TEXT NOT NULL,
  labels TEXT NOT NULL,
  verdict TEXT NOT NULL,
  longest_nonzero_s REAL,
  last_value REAL
);
CREATE INDEX gauges_run ON gauges (run_id);
CREATE TABLE thresholds (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  limit_value REAL,
  actual REAL,
  ok INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (run_id, name)
);
`,
];

/** The schema version this roundload writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

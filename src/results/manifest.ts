// run.json, the results folder's first file: its one shape, its one writer (`writeManifest`: a run, at its start
// and end, and a merge) and its one reader (`readManifest`, tolerant of older folders), so a field added to one
// side and not the other does not compile.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { NotARunError } from '../errors.js';
import { isObject } from '../util/index.js';
import { onResultsFs, rethrowFs } from './fs-error.js';
import { RESULT_FILES, resultPath, writeJsonAtomic, writeJsonLastResort } from './folder.js';
import { versionProblem } from './line.js';

/** run.json as written (schema_version: RESULTS_SCHEMA_VERSION). A run writes it `running` at its start and again
 * with its status and end; `roundload merge` writes one for the merged run. */
export interface RunManifestFile {
  schema_version: number;
  name: string;
  /** `running` until the run ends; a manifest still `running` after the fact means the process died. */
  status: string;
  started_at: string | null;
  ended_at: string | null;
  /** The command line (empty for a merge). */
  argv: readonly string[];
  labels: Record<string, string>;
  target: { url: string; embedded: boolean; model: string | null; tls_insecure: boolean };
  /** The embedded deployment a run started (its servers, this start's speed draw); null otherwise. */
  embedded_engine?: {
    topology: string;
    servers: { name: string; url: string; metrics_url: string; log: string | null }[];
    run_speed: { factor: number; spread_pct: number; seed: number | null };
  } | null;
  path: string;
  /** Where requests went: the URL, a CONNECT proxy, the canaries' way around the proxy. */
  route?: { request_url: string; connect_proxy: string | null; bypass_url: string | null };
  /** `--shard i/N` (null: the whole run). */
  shard: { index: number; count: number } | null;
  /** A merged run: each shard's folder and figures, and how many were merged. */
  merged_from?: Record<string, unknown>[];
  shards?: { count: number; merged: number };
  versions: Record<string, string>;
  host: Record<string, string | number>;
  /** The workload as resolved (secrets redacted). */
  workload: Record<string, unknown>;
  /** A replay: how its requests were sized to the server's tokens (docs/replay.md); null otherwise. */
  replay_sizing?: string | null;
}

/** What the commands read back from any run.json of every version (`readManifest`; older ones lack the rest). */
export type RunManifest = Pick<
  RunManifestFile,
  'schema_version' | 'name' | 'status' | 'started_at' | 'ended_at' | 'argv' | 'labels' | 'target' | 'path' | 'shard' | 'versions' | 'host' | 'workload'
> & {
  /** null in a run.json written before runs recorded their route. */
  route: NonNullable<RunManifestFile['route']> | null;
};

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' ? v : fallback;
}

function strOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
  return out;
}

/** Where a run's requests went (absent in an older run.json, and in a merged one): the URL, the CONNECT proxy,
 * the canaries' bypass, each kept only when it reads as one. */
function routeOf(v: unknown): RunManifest['route'] {
  if (!isObject(v) || typeof v.request_url !== 'string') return null;
  return { request_url: v.request_url, connect_proxy: strOrNull(v.connect_proxy), bypass_url: strOrNull(v.bypass_url) };
}

/** `--shard i/N` of the run, or null (the whole run, or a run.json without it). */
function shardOf(v: unknown): RunManifest['shard'] {
  return isObject(v) && typeof v.index === 'number' && typeof v.count === 'number' ? { index: v.index, count: v.count } : null;
}

/** Throws NotARunError (exit 2) when `dir` is missing or is not a roundload results folder, ResultsError
 * (exit 4) when the file system refuses to show it. */
function assertRunFolder(dir: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotARunError(`${dir}: no such folder; pass a results folder (results/<stamp>-<name>/ or a run's --out)`, { context: { dir } });
    rethrowFs(error, dir, 'read the results folder');
  }
  if (!isDir) throw new NotARunError(`${dir} is a file, not a results folder`, { context: { dir } });
  if (!existsSync(resultPath(dir, 'manifest'))) {
    throw new NotARunError(`${dir} is not a roundload results folder: it has no ${RESULT_FILES.manifest} (every run writes it first)`, { context: { dir } });
  }
}

/** Reads run.json, tolerant of missing fields (older or partial manifests) but not of a non-run file. */
export function readManifest(dir: string): RunManifest {
  assertRunFolder(dir);
  const path = resultPath(dir, 'manifest');
  const text = onResultsFs(path, 'read', () => readFileSync(path, 'utf8'));
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new NotARunError(`${path} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error, context: { dir } });
  }
  if (!isObject(raw) || typeof raw.name !== 'string' || typeof raw.status !== 'string') {
    throw new NotARunError(`${path} is not a roundload manifest (no name/status)`, { context: { dir } });
  }
  // Every run.json roundload wrote has its schema_version; one without is read as the first version.
  const version = raw.schema_version ?? 1;
  const problem = versionProblem(version);
  if (problem !== null) throw new NotARunError(`${path}: schema_version ${problem}`, { context: { dir } });
  const target = isObject(raw.target) ? raw.target : {};
  return {
    schema_version: version as number,
    name: raw.name,
    status: raw.status,
    started_at: strOrNull(raw.started_at),
    ended_at: strOrNull(raw.ended_at),
    argv: Array.isArray(raw.argv) ? raw.argv.filter((a): a is string => typeof a === 'string') : [],
    labels: stringRecord(raw.labels),
    target: {
      url: str(target.url, 'unknown'),
      embedded: target.embedded === true,
      model: strOrNull(target.model),
      tls_insecure: target.tls_insecure === true,
    },
    path: str(raw.path, 'direct'),
    route: routeOf(raw.route),
    shard: shardOf(raw.shard),
    versions: stringRecord(raw.versions),
    host: isObject(raw.host) ? Object.fromEntries(Object.entries(raw.host).filter((e): e is [string, string | number] => typeof e[1] === 'string' || typeof e[1] === 'number')) : {},
    workload: isObject(raw.workload) ? raw.workload : {},
  };
}

/** Writes run.json, through `scrub` (the run's secret scrubber). `lastResort`: the run's last word on a disk that
 * filled up, written in place when a copy does not fit (folder.ts). @throws ResultsError */
export function writeManifest(dir: string, manifest: RunManifestFile, options: { scrub?: <T>(value: T) => T; lastResort?: boolean } = {}): void {
  const value = options.scrub === undefined ? manifest : options.scrub(manifest);
  (options.lastResort === true ? writeJsonLastResort : writeJsonAtomic)(resultPath(dir, 'manifest'), value);
}

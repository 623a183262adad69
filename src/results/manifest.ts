// run.json, the results folder's first file: its one shape, which a run and a merge write and `readManifest`
// reads back (tolerant of older folders), so a field added to one side and not the other does not compile.
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

/** What the commands read back from any run.json (older ones lack the rest). */
export type RunManifest = Pick<RunManifestFile, 'schema_version' | 'name' | 'status' | 'started_at' | 'ended_at' | 'argv' | 'labels' | 'target' | 'path' | 'versions' | 'host' | 'workload'>;

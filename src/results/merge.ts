// Merging the shards of one run (`roundload run --shard i/N` on several machines) into one results folder:
// requests, events and gauges interleaved on a common clock, histograms merged exactly through their
// encoding, and the summary rebuilt by the same SummaryBuilder a live run uses. Streams, so a night of
// records merges in constant memory.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { hostname, platform, cpus } from 'node:os';
import { resolve } from 'node:path';
import { SummaryBuilder, plannedLengthS, windowSettingOf, type Summary } from '../analysis/index.js';
import { runThresholds } from './limits.js';
import { RESULTS_SCHEMA_VERSION, type RequestRecord } from '../types/index.js';
import { NotARunError, UsageError } from '../errors.js';
import { onResultsFs } from './fs-error.js';
import { VERSION } from '../version.js';
import { resultPath } from './folder.js';
import { readHistograms, writeHistograms } from './histograms-file.js';
import { readManifest, writeManifest, type RunManifest, type RunManifestFile } from './manifest.js';
import { isCanary, isClientSample, isLoadEvent, isRequestRecord, kindLineCursor, requestCursor, type KindLineFile, type RecordCursor } from './records.js';
import { thinkTimeMsOf } from './rebuild.js';
import { RotatingJsonlWriter, type RotationOptions } from './rotate.js';
import { writeSummary } from './summary-file.js';
import { isObject, oneLine, round3 } from '../util/index.js';

export interface MergeOptions {
  /** The merged folder; created, and refused when it already holds a run. */
  out: string;
  log?: (line: string) => void;
}

export interface MergeResult {
  dir: string;
  summary: Summary;
  /** The merged run.json. */
  manifest: RunManifestFile;
  /** What was missing or skipped, one sentence each. */
  notes: string[];
}

interface Input {
  dir: string;
  manifest: RunManifest;
  shard: NonNullable<RunManifest['shard']>;
  /** ms from the earliest shard's start to this one's: added to its `run_ms`. */
  offsetMs: number;
  status: string;
}

const STATUS_RANK: Record<string, number> = { completed: 0, interrupted: 1, failed: 2, killed: 3, running: 3 };

/** The first key path where two JSON values differ (`agents.count`), or null when they are equal. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[key], b[key], path === '' ? key : `${path}.${key}`);
      if (d !== null) return d;
    }
    return null;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return path === '' ? '(length)' : path;
    for (let i = 0; i < a.length; i += 1) {
      const d = firstDifference(a[i], b[i], `${path}.${i}`);
      if (d !== null) return d;
    }
    return null;
  }
  return Object.is(a, b) ? null : path === '' ? '(value)' : path;
}

/** The labels every shard has with the same value. */
function sharedLabels(all: readonly Record<string, string>[]): Record<string, string> {
  const [first = {}, ...rest] = all;
  return Object.fromEntries(Object.entries(first).filter(([k, v]) => rest.every((l) => l[k] === v)));
}

/** Checks the inputs are shards of one workload and lays them on a common clock. @throws NotARunError */
function readInputs(dirs: readonly string[], out: string): { inputs: Input[]; notes: string[] } {
  if (dirs.length === 0) throw new NotARunError('merge needs at least one results folder (one per shard)');
  const notes: string[] = [];
  const inputs: Omit<Input, 'offsetMs'>[] = [];
  for (const dir of dirs) {
    if (resolve(dir) === resolve(out)) throw new UsageError(`--out ${out} is one of the folders being merged; pick a new folder`);
    const manifest = readManifest(dir);
    const shard = manifest.shard;
    if (shard === null) throw new NotARunError(`${dir} is not a shard (it was not run with --shard i/N); merge combines the shards of one run`, { context: { dir } });
    inputs.push({ dir, manifest, shard, status: manifest.status });
  }
  const [first] = inputs;
  // Labels name a shard's machine (`--label pod=…`), not its load: they may differ (the merged run keeps the
  // ones all shards share).
  const load = (w: unknown): unknown => (w !== null && typeof w === 'object' ? { ...(w as Record<string, unknown>), labels: null } : w);
  for (const input of inputs.slice(1)) {
    const difference = firstDifference(load(first!.manifest.workload), load(input.manifest.workload));
    if (difference !== null) {
      throw new NotARunError(`${input.dir} ran a different workload than ${first!.dir} (they differ at ${oneLine(difference)}); merge only shards of one run`, {
        context: { dir: input.dir, field: difference },
      });
    }
    if (input.shard.count !== first!.shard.count)
      throw new NotARunError(`${input.dir} is shard ${input.shard.index}/${input.shard.count} but ${first!.dir} is shard ${first!.shard.index}/${first!.shard.count}: shard counts differ`);
  }
  const seen = new Map<number, string>();
  for (const input of inputs) {
    const other = seen.get(input.shard.index);
    if (other !== undefined) throw new NotARunError(`${input.dir} and ${other} are both shard ${input.shard.index}/${input.shard.count}`);
    seen.set(input.shard.index, input.dir);
  }
  const missing = Array.from({ length: first!.shard.count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) notes.push(`shards ${missing.map((i) => `${i}/${first!.shard.count}`).join(', ')} missing: the merge covers ${inputs.length} of ${first!.shard.count}`);
  for (const input of inputs) if (input.status !== 'completed') notes.push(`shard ${input.shard.index}/${input.shard.count} (${input.dir}) ended ${input.status}`);
  const startMs = (m: RunManifest): number => (m.started_at === null ? NaN : Date.parse(m.started_at));
  const starts = inputs.map((i) => startMs(i.manifest));
  if (starts.some((s) => !Number.isFinite(s))) throw new NotARunError("a shard's run.json has no started_at; cannot lay the shards on one clock");
  const t0 = Math.min(...starts);
  const placed = inputs.map((input, i) => ({ ...input, offsetMs: starts[i]! - t0 })).sort((a, b) => a.shard.index - b.shard.index);
  return { inputs: placed, notes };
}

/** k-way merge of already ordered streams by `key` (each shard's file is in its own time order). */
async function mergeStreams<T>(cursors: RecordCursor<T>[], key: (value: T, i: number) => number, emit: (value: T, i: number) => void): Promise<void> {
  await Promise.all(cursors.map((c) => c.next()));
  for (;;) {
    let best = -1;
    let bestKey = Infinity;
    cursors.forEach((c, i) => {
      if (c.current === null) return;
      const k = key(c.current, i);
      if (best < 0 || k < bestKey) {
        best = i;
        bestKey = k;
      }
    });
    if (best < 0) return;
    const cursor = cursors[best]!;
    emit(cursor.current!, best);
    await cursor.next();
  }
}

/** What the merge's steps share: the shards on their common clock, the merged folder, how its JSONL files
 * rotate, the summary being built, and the notes for the user. */
interface Merge {
  inputs: readonly Input[];
  out: string;
  rotation: RotationOptions;
  builder: SummaryBuilder;
  notes: string[];
}

/** Merges shard folders into `options.out`. @throws NotARunError when they are not shards of one run. */
export async function mergeRuns(dirs: readonly string[], options: MergeOptions): Promise<MergeResult> {
  const out = resolve(options.out);
  const { inputs, notes } = readInputs(dirs, out);
  if (existsSync(out) && readdirSync(out).length > 0) throw new UsageError(`--out ${options.out} already exists and is not empty; merge writes a new folder`);
  onResultsFs(out, 'create the results folder', () => mkdirSync(out, { recursive: true }));
  const first = inputs[0]!;
  const labels = sharedLabels(inputs.map((i) => i.manifest.labels));
  const dropped = Object.keys(first.manifest.labels).filter((k) => !(k in labels));
  if (dropped.length > 0) notes.push(`labels that differ between shards are left out of the merged run (each shard's are in run.json merged_from): ${dropped.join(', ')}`);
  const workload = first.manifest.workload;
  const rotation = rotationOf(workload, options.log);

  // ITL gaps exist only in histograms.json; without one from every shard, fall back to per-request stats.
  const fileSets = inputs.map((i) => readHistograms(i.dir)).map((read) => ('set' in read ? read.set : null));
  const itlFromRecords = fileSets.some((s) => s === null);
  if (itlFromRecords) notes.push('a shard has no readable histograms.json: ITL percentiles approximated from per-request stats');
  const builder = new SummaryBuilder({
    itlFromRecords,
    windowS: windowSettingOf(workload),
    plannedS: plannedLengthS(workload),
    thresholds: runThresholds(workload, []),
    thinkTimeMs: thinkTimeMsOf(workload),
  });
  const merge: Merge = { inputs, out, rotation, builder, notes };

  const requests = await mergeRequests(merge);
  for (const file of ['events', 'gauges'] as const) await mergeLines(merge, file);
  if (requests.skipped > 0) notes.push(`requests.jsonl: ${requests.skipped} lines of the shards did not parse or were not request records (a killed shard's torn last line, say) and were skipped`);
  await requests.writer.settle(30_000);

  if (!itlFromRecords) {
    // ttft, ttfc, tpot, reasoning and e2e were recorded from the records; ITL gaps come from the shards'
    // histograms, merged exactly.
    for (const set of fileSets) builder.histograms.merge(set!, 'itl');
  }
  writeHistograms(out, builder.histograms);

  const run = mergedRun(inputs, labels);
  const summary = builder.build(run);
  writeSummary(out, summary);
  const manifest = mergedManifest(inputs, run, requests.counts, workload);
  writeManifest(out, manifest);
  return { dir: out, summary, manifest, notes };
}

/** The merged JSONL files rotate (and compress) as the shards' workload says. */
function rotationOf(workload: Record<string, unknown>, log: MergeOptions['log']): RotationOptions {
  const results = isObject(workload.results) ? workload.results : {};
  const maxFileMb = typeof results.max_file_mb === 'number' ? results.max_file_mb : null;
  return { maxBytes: maxFileMb === null ? null : maxFileMb * 1024 * 1024, compress: results.compress_rotated === true, ...(log === undefined ? {} : { log }) };
}

/** Requests, in the order one run would have written them (by end time on the common clock). Socket ids
 * are per process, so they get the shard's index in front (`s1-c3`) to stay distinct. The writer is returned
 * closed; the caller settles it (its rotated parts' compression) once the events and gauges are merged too.
 * @returns the requests of each shard, and the lines skipped. */
async function mergeRequests(m: Merge): Promise<{ writer: RotatingJsonlWriter; counts: number[]; skipped: number }> {
  const { inputs, builder } = m;
  const requests = new RotatingJsonlWriter(resultPath(m.out, 'requests'), m.rotation);
  const requestCursors = inputs.map((i) => requestCursor(i.dir));
  const counts = inputs.map(() => 0);
  await mergeStreams(
    requestCursors,
    (r, i) => r.run_ms + inputs[i]!.offsetMs + r.e2e_ms,
    (r, i) => {
      const input = inputs[i]!;
      const record: RequestRecord = {
        ...r,
        run_ms: round3(r.run_ms + input.offsetMs),
        connection: r.connection === null ? null : { ...r.connection, id: `s${input.shard.index}-${r.connection.id}` },
      };
      requests.write(record);
      builder.add(record);
      counts[i]! += 1;
    },
  );
  requests.close();
  return { writer: requests, counts, skipped: requestCursors.reduce((n, c) => n + c.report.skipped.length, 0) };
}

/** Events and gauges, by wall-clock time, each line tagged with its shard. */
async function mergeLines(m: Merge, file: KindLineFile): Promise<void> {
  const { inputs, builder } = m;
  const writer = new RotatingJsonlWriter(resultPath(m.out, file), m.rotation);
  const cursors = inputs.map((i) => kindLineCursor(i.dir, file));
  await mergeStreams(
    cursors,
    (e) => (typeof e.t === 'string' ? Date.parse(e.t) : 0) || 0,
    (e, i) => {
      const input = inputs[i]!;
      const line: Record<string, unknown> = { ...e, shard: input.shard.index };
      if (typeof e.run_ms === 'number') line.run_ms = round3(e.run_ms + input.offsetMs);
      if (typeof e.scheduled_ms === 'number') line.scheduled_ms = round3(e.scheduled_ms + input.offsetMs);
      // A hang event carries its request record: on the common clock too, like requests.jsonl.
      if (isRequestRecord(e.record)) line.record = { ...e.record, run_ms: round3(e.record.run_ms + input.offsetMs) };
      if (file === 'events' && isClientSample(e)) builder.addClientSample(e);
      if (file === 'events' && isCanary(line)) builder.addCanary(line);
      // Each shard announces every stage: the first (earliest) announcement places it, the rest change nothing.
      if (file === 'events' && isLoadEvent(line)) builder.addLoad(line);
      writer.write(line);
    },
  );
  writer.close();
  const skipped = cursors.reduce((n, c) => n + c.report.skipped.length, 0);
  if (skipped > 0) m.notes.push(`${file}.jsonl: ${skipped} lines of the shards did not parse and were skipped`);
  await writer.settle(30_000);
}

/** The merged run: the worst status of its shards, from the earliest start to the latest end, on every target. */
function mergedRun(inputs: readonly Input[], labels: Record<string, string>): Summary['run'] {
  const first = inputs[0]!;
  const status = inputs.map((i) => i.status).reduce((worst, s) => ((STATUS_RANK[s] ?? 3) > (STATUS_RANK[worst] ?? 3) ? s : worst), 'completed');
  const startedAt = new Date(Math.min(...inputs.map((i) => Date.parse(i.manifest.started_at!)))).toISOString();
  const ends = inputs.map((i) => (i.manifest.ended_at === null ? NaN : Date.parse(i.manifest.ended_at))).filter(Number.isFinite);
  const endedAt = ends.length === 0 ? null : new Date(Math.max(...ends)).toISOString();
  const targets = [...new Set(inputs.map((i) => i.manifest.target.url))];
  return {
    name: first.manifest.name,
    status,
    started_at: startedAt,
    ended_at: endedAt,
    wall_s: endedAt === null ? 0 : (Date.parse(endedAt) - Date.parse(startedAt)) / 1000,
    target: targets.join(', '),
    path: first.manifest.path,
    labels,
  };
}

/** The merged run.json: the merged run, and each shard's own figures in `merged_from`. */
function mergedManifest(inputs: readonly Input[], run: Summary['run'], counts: readonly number[], workload: Record<string, unknown>): RunManifestFile {
  const first = inputs[0]!;
  return {
    schema_version: RESULTS_SCHEMA_VERSION,
    name: run.name,
    status: run.status,
    started_at: run.started_at,
    ended_at: run.ended_at,
    argv: [],
    labels: run.labels,
    target: { ...first.manifest.target, url: run.target },
    path: run.path,
    shard: null,
    merged_from: inputs.map((i, n) => ({
      dir: resolve(i.dir),
      shard: i.shard,
      status: i.status,
      started_at: i.manifest.started_at,
      ended_at: i.manifest.ended_at,
      host: i.manifest.host,
      labels: i.manifest.labels,
      requests: counts[n],
      offset_ms: i.offsetMs,
    })),
    shards: { count: first.shard.count, merged: inputs.length },
    versions: { roundload: VERSION, node: process.version },
    host: { hostname: hostname(), platform: platform(), cpus: cpus().length },
    workload,
  };
}

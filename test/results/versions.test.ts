// The results folder's versions: every command that reads a folder reads the folders of every earlier version
// (test/fixtures/results/v<N>/, written by the roundload of that version: see its README.md), this version's
// lines carry their version, and a folder of a newer version is refused with its place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rebuildReports } from '../../src/commands/report.js';
import { loadRun } from '../../src/compare/index.js';
import { NotARunError, NoFailureError, RecordError } from '../../src/errors.js';
import { writeRepro } from '../../src/repro/index.js';
import { isKindLine, mergeRuns, readKindLines, readManifest, readRequestRecords, readSummary, rebuildSummary, resultsLine } from '../../src/results/index.js';
import { HISTOGRAMS_FILE_VERSION } from '../../src/metrics/index.js';
import { RESULTS_SCHEMA_VERSION } from '../../src/types/index.js';
import { ROOT } from '../helpers/root.js';
import { tempDir } from '../helpers/tmp.js';

/** Each earlier version's fixtures: the oldest run folders of that version and the newest, two shards each. */
const VERSIONS = [{ version: 1, runs: ['early', 'late'] }] as const;
const fixture = (version: number, run: string, shard: number): string => join(ROOT, 'test/fixtures/results', `v${version}`, run, `shard-${shard}`);
const FOLDERS = VERSIONS.flatMap(({ version, runs }) => runs.flatMap((run) => [0, 1].map((shard) => ({ version, run, shard, dir: fixture(version, run, shard) }))));

/** A fixture copied where a command may write into it. */
function copy(t: import('node:test').TestContext, dir: string): string {
  const out = join(tempDir(t), 'run');
  cpSync(dir, out, { recursive: true });
  return out;
}

function lines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

test('every earlier version is older than this one, and its lines have no version field (version 1) or an older one', () => {
  for (const { version, dir } of FOLDERS) {
    assert.ok(version < RESULTS_SCHEMA_VERSION, `${dir}: a fixture of this version is not an earlier one`);
    for (const file of ['requests.jsonl', 'events.jsonl']) {
      for (const line of lines(join(dir, file))) {
        const v = (JSON.parse(line) as { v?: unknown }).v;
        assert.equal(v ?? 1, version, `${dir}/${file}: ${line.slice(0, 40)}`);
      }
    }
  }
});

test('the readers read each file of every earlier version: run.json, summary.json, requests.jsonl, events.jsonl, gauges.jsonl, nothing skipped', async () => {
  for (const { version, dir } of FOLDERS) {
    const manifest = readManifest(dir);
    assert.equal(manifest.schema_version, version, dir);
    assert.equal(manifest.shard?.count, 2, dir);
    const summary = readSummary(dir);
    assert.equal(summary.schema_version, version, dir);
    const records: string[] = [];
    const requests = await readRequestRecords(dir, (r) => records.push(r.conversation));
    assert.equal(records.length, lines(join(dir, 'requests.jsonl')).length, dir);
    assert.deepEqual(requests.skipped, [], dir);
    assert.equal(records.length, summary.totals.requests, `${dir}: the records are the summary's requests`);
    const kinds: string[] = [];
    const events = await readKindLines(dir, 'events', isKindLine, (e) => kinds.push(e.kind));
    assert.deepEqual(events.skipped, [], dir);
    assert.ok(kinds.includes('run_start') && kinds.includes('run_end'), `${dir}: ${kinds.join(', ')}`);
    const gauges = await readKindLines(dir, 'gauges', isKindLine, () => {});
    assert.deepEqual(gauges.skipped, [], dir);
  }
});

test('`report` rebuilds the summary of every earlier version, as the version that wrote it counted (written in this version)', async (t) => {
  for (const { dir } of FOLDERS) {
    const written = readSummary(dir);
    const out = await rebuildReports(copy(t, dir));
    assert.equal(out.problems.length, 0, `${dir}: ${out.problems.join('; ')}`);
    assert.equal(out.summary.schema_version, RESULTS_SCHEMA_VERSION);
    for (const key of ['requests', 'ok', 'errors', 'hangs'] as const) assert.equal(out.summary.totals[key], written.totals[key], `${dir}: totals.${key}`);
    assert.equal(readSummary(out.dir).totals.requests, written.totals.requests);
  }
});

test('`compare` reads every earlier version: its windows from summary.json, its requests from requests.jsonl', async () => {
  for (const { dir } of FOLDERS) {
    const run = await loadRun(dir);
    assert.equal(run.badLines, 0, dir);
    const windows = [...run.phases.values()].flatMap((p) => p.windows);
    assert.ok(windows.length > 0, dir);
    const ok = readSummary(dir).totals.ok;
    assert.equal(
      windows.reduce((n, w) => n + w.e2e.total, 0),
      ok,
      `${dir}: every ok request in a window`,
    );
  }
});

test('`merge` merges the shards of every earlier version into a folder of this version', async (t) => {
  for (const { version, runs } of VERSIONS) {
    for (const run of runs) {
      const shards = [0, 1].map((shard) => fixture(version, run, shard));
      const merged = await mergeRuns(shards, { out: join(tempDir(t), 'merged') });
      const requests = shards.reduce((n, dir) => n + readSummary(dir).totals.requests, 0);
      assert.equal(merged.summary.totals.requests, requests, `${run}: both shards' requests`);
      assert.equal(merged.manifest.schema_version, RESULTS_SCHEMA_VERSION);
      for (const file of ['requests.jsonl', 'events.jsonl']) {
        const written = lines(join(merged.dir, file));
        assert.ok(written.length > 0, file);
        for (const line of written) assert.ok(line.startsWith(`{"v":${RESULTS_SCHEMA_VERSION},`), `${run}/${file}: ${line.slice(0, 40)}`);
      }
      // The merged folder reads back as any folder does.
      assert.equal(readManifest(merged.dir).schema_version, RESULTS_SCHEMA_VERSION);
      assert.equal((await loadRun(merged.dir)).badLines, 0);
    }
  }
});

test('`repro` writes a reproducer from a failed run of every earlier version, and says when a run had no failure', async (t) => {
  for (const { dir, run } of FOLDERS) {
    const hangs = readSummary(dir).totals.hangs;
    if (hangs === 0) {
      await assert.rejects(writeRepro(dir, { out: join(tempDir(t), 'repro') }), NoFailureError, `${run}: nothing failed`);
      continue;
    }
    const out = await writeRepro(dir, { out: join(tempDir(t), 'repro') });
    assert.notEqual(out.plan.failure.hang, null, dir);
    assert.match(out.plan.diagnosis ?? '', /^diagnosis: /, 'the diagnosis read from summary.json');
    assert.equal(out.plan.target, readManifest(dir).route?.request_url, "the run's route, read from run.json");
  }
});

test('a line of a newer version is refused with its file, line and field (exit 2); so are a newer run.json and summary.json', async (t) => {
  const newer = RESULTS_SCHEMA_VERSION + 1;
  const source = fixture(1, 'late', 0);

  const lineDir = copy(t, source);
  const [first, ...rest] = lines(join(lineDir, 'requests.jsonl'));
  writeFileSync(join(lineDir, 'requests.jsonl'), [first, `{"v":${newer},${rest[0]!.slice(1)}`, ...rest.slice(1)].map((l) => `${l}\n`).join(''));
  await assert.rejects(
    readRequestRecords(lineDir, () => {}),
    (e: unknown) => e instanceof RecordError && e.exitCode === 2 && new RegExp(`requests\\.jsonl:2: v is ${newer}: written by a newer roundload`).test(e.message),
  );

  const manifestDir = copy(t, source);
  const manifest = JSON.parse(readFileSync(join(manifestDir, 'run.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(manifestDir, 'run.json'), JSON.stringify({ ...manifest, schema_version: newer }));
  assert.throws(
    () => readManifest(manifestDir),
    (e: unknown) => e instanceof NotARunError && new RegExp(`run\\.json: schema_version is ${newer}: written by a newer roundload`).test(e.message),
  );

  const summaryDir = copy(t, source);
  const summary = JSON.parse(readFileSync(join(summaryDir, 'summary.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(summaryDir, 'summary.json'), JSON.stringify({ ...summary, schema_version: newer }));
  await assert.rejects(loadRun(summaryDir), (e: unknown) => e instanceof NotARunError && new RegExp(`summary\\.json schema_version is ${newer}: written by a newer roundload`).test(e.message));
});

test("histograms.json of another format version is not read as this one's: the rebuild says so and approximates ITL; its own version reads", async (t) => {
  const source = fixture(1, 'late', 0);
  const same = await rebuildSummary(copy(t, source));
  assert.ok(same.had.histograms && !same.notes.some((n) => n.includes('histograms.json')), same.notes.join('\n'));

  const dir = copy(t, source);
  const file = JSON.parse(readFileSync(join(dir, 'histograms.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(file.version, HISTOGRAMS_FILE_VERSION, 'the fixture is of the version read now');
  writeFileSync(join(dir, 'histograms.json'), JSON.stringify({ ...file, version: HISTOGRAMS_FILE_VERSION + 1 }));
  const other = await rebuildSummary(dir);
  assert.equal(other.had.histograms, false);
  assert.ok(
    other.notes.includes(
      `histograms.json unreadable (its format version is ${HISTOGRAMS_FILE_VERSION + 1}; this roundload reads version ${HISTOGRAMS_FILE_VERSION}): ITL percentiles approximated from per-request stats`,
    ),
    other.notes.join('\n'),
  );
});

test("this version's line: the version first, then the value's own fields; read back without it", async (t) => {
  assert.equal(resultsLine({ a: 1 }), `{"v":${RESULTS_SCHEMA_VERSION},"a":1}`);
  assert.equal(resultsLine({}), `{"v":${RESULTS_SCHEMA_VERSION}}`);
  const dir = copy(t, fixture(1, 'late', 0));
  const values = lines(join(dir, 'events.jsonl')).map((l) => JSON.parse(l) as Record<string, unknown>);
  writeFileSync(join(dir, 'events.jsonl'), values.map((v) => `${resultsLine(v)}\n`).join(''));
  const read: unknown[] = [];
  await readKindLines(dir, 'events', isKindLine, (e) => read.push(e));
  assert.deepEqual(read, values, 'the same events, without their version');
});

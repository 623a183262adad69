// The history database: made from nothing by its migrations, a run added once however often it is appended
// or imported, every figure of a run kept, read back, exported, and any other file refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendRun, findRun, historyCsv, historyRunFromFolder, listRuns, openHistory, phasePoints, runDetail, SCHEMA_VERSION } from '../../src/history/index.js';
import { HistoryError } from '../../src/errors.js';
import { runCli, tempDir } from '../helpers/tmp.js';
import { runFolder } from './fixtures.js';
import { COMPILED, sourceModule } from '../helpers/root.js';
import { HISTORY_FIGURE_COLUMNS } from '../../src/types/index.js';

test('a new history file is created at the current schema version, marked as a roundload history, with every table', async (t) => {
  const file = join(tempDir(t), 'h.db');
  const db = await openHistory(file, { create: true });
  db.close();
  const raw = new Database(file, { readonly: true });
  t.after(() => raw.close());
  assert.equal(raw.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  assert.equal(raw.pragma('application_id', { simple: true }), 0x726c6468);
  const tables = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
  assert.deepEqual(tables, ['failures', 'figures', 'gauges', 'runs', 'thresholds']);
});

test('appending a run twice, then importing its folder, keeps one run: the run id comes from the run, not the path', async (t) => {
  const dir = tempDir(t);
  const folder = await runFolder(join(dir, 'r1'), { startedAt: '2026-12-01T02:00:00.000Z' });
  const db = await openHistory(join(dir, 'h.db'), { create: true });
  t.after(() => db.close());
  const rows = historyRunFromFolder(folder);
  assert.equal(appendRun(db, rows), 'added');
  assert.equal(appendRun(db, rows), 'exists');
  assert.equal(appendRun(db, historyRunFromFolder(folder)), 'exists');
  assert.equal(listRuns(db).length, 1);
  assert.equal(Number(db.prepare('SELECT count(*) FROM figures').pluck().get()), 3, 'the phase and its two rounds, once');
});

test('a run keeps its labels, verdict, hangs by class, thresholds and per-round percentiles', async (t) => {
  const dir = tempDir(t);
  const folder = await runFolder(join(dir, 'r'), { startedAt: '2026-12-01T02:00:00.000Z', labels: { git_sha: 'f00d', engine: 'sglang-0.5' }, ttftMs: 40, hang: true });
  const db = await openHistory(join(dir, 'h.db'), { create: true });
  t.after(() => db.close());
  appendRun(db, historyRunFromFolder(folder));
  const [run] = listRuns(db);
  const detail = runDetail(db, run!.runId.slice(0, 6));
  assert.deepEqual(detail.run.labels, { git_sha: 'f00d', engine: 'sglang-0.5' });
  assert.equal(detail.run.cells.verdict, 'fail');
  assert.equal(detail.run.cells.exit_code, 1);
  assert.equal(detail.run.cells.hangs, 1);
  assert.deepEqual(
    detail.failures.map((f) => [f.kind, f.class, f.count]),
    [['hang', 'mid_stream', 1]],
  );
  const hangs = detail.thresholds.find((r) => r.name === 'hangs');
  assert.deepEqual([hangs?.ok, hangs?.actual, hangs?.limit_value], [0, 1, 0]);
  const round1 = detail.figures.find((f) => f.phase === 'main' && f.round === 1);
  assert.equal(Math.round(Number(round1?.ttft_p50_ms)), 40, 'HDR precision: 40.031');
  assert.equal(round1?.requests, 2);
  const phase = detail.figures.find((f) => f.phase === 'main' && f.round === 0);
  assert.equal(phase?.requests, 5);
  assert.ok(typeof phase?.e2e_p99_ms === 'number' && phase.e2e_p99_ms >= 240);
});

test('runs list in the order they started, filtered by label; a phase reads run by run', async (t) => {
  const dir = tempDir(t);
  const db = await openHistory(join(dir, 'h.db'), { create: true });
  t.after(() => db.close());
  const nights = ['2026-12-03', '2026-12-01', '2026-12-02'];
  for (const [i, day] of nights.entries()) {
    const folder = await runFolder(join(dir, day), { startedAt: `${day}T02:00:00.000Z`, ttftMs: 10 * (i + 1), labels: { pool: i === 0 ? 'b' : 'a' } });
    appendRun(db, historyRunFromFolder(folder));
  }
  assert.deepEqual(
    listRuns(db).map((r) => r.startedAt?.slice(0, 10)),
    ['2026-12-01', '2026-12-02', '2026-12-03'],
  );
  assert.deepEqual(
    phasePoints(db, 'main', { labels: { pool: 'a' } }).map((p) => Math.round(Number(p.figures.ttft_p50_ms))),
    [20, 30],
  );
  assert.equal(findRun(db, '2026-12-02').startedAt, '2026-12-02T02:00:00.000Z', 'a run is found by its folder name too');
});

test('a run is found by a label (k=v, or its value alone); a key naming several runs lists each with how it matched', async (t) => {
  const dir = tempDir(t);
  const db = await openHistory(join(dir, 'h.db'), { create: true });
  t.after(() => db.close());
  const commits = ['d6', 'e7', 'e7'];
  for (const [i, commit] of commits.entries()) appendRun(db, historyRunFromFolder(await runFolder(join(dir, `night-${i}`), { startedAt: `2026-12-0${i + 1}T02:00:00.000Z`, labels: { commit } })));
  const runs = listRuns(db);
  assert.equal(findRun(db, 'd6').runId, runs[0]!.runId, 'a label value alone');
  assert.equal(findRun(db, 'commit=d6').runId, runs[0]!.runId, 'a label as k=v');
  assert.equal(runDetail(db, 'd6').namedBy, 'label commit=d6');
  assert.equal(runDetail(db, runs[1]!.runId).namedBy, 'run id');
  assert.throws(
    () => findRun(db, 'commit=f8'),
    (e: unknown) => e instanceof HistoryError && /^no run "commit=f8" in the history: no run id, results folder or label matches it/.test(e.message),
  );
  assert.throws(
    () => findRun(db, 'e7'),
    (e: unknown) =>
      e instanceof HistoryError &&
      e.message ===
        `"e7" matches 2 runs: ${runs[1]!.runId} (started 2026-12-02T02:00:00.000Z; label commit=e7), ${runs[2]!.runId} (started 2026-12-03T02:00:00.000Z; label commit=e7); give one's run id (or more of it)`,
  );
  // A label that is also the start of another run's id: both listed, never one picked silently.
  const prefix = runs[2]!.runId.slice(0, 2);
  appendRun(db, historyRunFromFolder(await runFolder(join(dir, 'night-x'), { startedAt: '2026-12-09T02:00:00.000Z', labels: { commit: prefix } })));
  assert.throws(
    () => findRun(db, prefix),
    (e: unknown) =>
      e instanceof HistoryError && e.message.includes(`${runs[2]!.runId} (started 2026-12-03T02:00:00.000Z; run id starts with "${prefix}")`) && e.message.includes(`label commit=${prefix}`),
  );
});

test('`history show FILE d6` shows the run labelled d6 and says which run it is on stderr', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'h.db');
  const folders = [
    await runFolder(join(dir, 'n1'), { startedAt: '2026-12-01T02:00:00.000Z', labels: { commit: 'd6' } }),
    await runFolder(join(dir, 'n2'), { startedAt: '2026-12-02T02:00:00.000Z', labels: { commit: 'e7' } }),
  ];
  const imported = await runCli(['history', 'import', file, ...folders]);
  assert.equal(imported.code, 0, imported.stderr);
  const db = await openHistory(file, { create: false });
  const id = listRuns(db)[0]!.runId;
  db.close();
  const show = await runCli(['history', 'show', file, 'd6']);
  assert.equal(show.code, 0, show.stderr);
  assert.equal(show.stderr, `"d6": run ${id} (label commit=d6)\n`);
  assert.match(show.stdout, new RegExp(`^run_id +${id}$`, 'm'));
  const missing = await runCli(['history', 'show', file, 'f8']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^roundload: no run "f8" in the history: no run id, results folder or label matches it/);
});

test('the CSV export has a header and one line per run, phase and round, labels quoted', async (t) => {
  const dir = tempDir(t);
  const db = await openHistory(join(dir, 'h.db'), { create: true });
  t.after(() => db.close());
  appendRun(db, historyRunFromFolder(await runFolder(join(dir, 'r'), { startedAt: '2026-12-01T02:00:00.000Z', labels: { a: '1', b: '2' } })));
  const lines = historyCsv(db).trimEnd().split('\n');
  assert.equal(lines.length, 4);
  assert.match(lines[0]!, /^run_id,started_at,name,status,verdict,exit_code,target,labels,.*,phase,round,requests,.*,ttft_p99_ms,.*e2e_p99_ms$/);
  assert.match(lines[1]!, /,"\{""a"":""1"",""b"":""2""\}",/);
  assert.match(lines[1]!, /,main,0,4,4,0,0,/);
});

test('a missing file, a text file and another application’s SQLite file are refused with one line each', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(openHistory(join(dir, 'none.db'), { create: false }), (e: unknown) => e instanceof HistoryError && /no such history file/.test(e.message));
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'not a database at all, just some text that is long enough to have a header\n'.repeat(20));
  await assert.rejects(
    openHistory(text, { create: true }),
    (e: unknown) => e instanceof HistoryError && /is not a roundload history: file is not a database/.test(e.message) && !e.message.includes('\n'),
  );
  const other = join(dir, 'other.db');
  const raw = new Database(other);
  raw.exec('CREATE TABLE t (x)');
  raw.close();
  await assert.rejects(openHistory(other, { create: true }), (e: unknown) => e instanceof HistoryError && /SQLite database but not a roundload history/.test(e.message));
});

test('a history from a newer roundload is refused, naming its version', async (t) => {
  const file = join(tempDir(t), 'h.db');
  (await openHistory(file, { create: true })).close();
  const raw = new Database(file);
  raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  raw.close();
  await assert.rejects(openHistory(file, { create: false }), (e: unknown) => e instanceof HistoryError && e.message.includes(`version ${SCHEMA_VERSION + 1}, newer`));
});

test('better-sqlite3 stays unloaded until a history is opened: the commands import without it, the first open loads it', () => {
  const commands = sourceModule(new URL('../../src/commands/index.ts', import.meta.url));
  const history = sourceModule(new URL('../../src/history/index.ts', import.meta.url));
  const script = `
    import { createRequire } from 'node:module';
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes('better-sqlite3'));
    await import(${JSON.stringify(commands)});
    const before = loaded();
    const { openHistory } = await import(${JSON.stringify(history)});
    (await openHistory(':memory:', { create: true })).close();
    process.stdout.write(JSON.stringify([before, loaded()]));`;
  const res = spawnSync(process.execPath, [...(COMPILED ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(res.stdout, '[false,true]', res.stderr);
});

test('a database of every earlier schema version opens, is migrated, and takes a run with every figure this version writes', async (t) => {
  const dir = tempDir(t);
  const { MIGRATIONS } = await import('../../src/history/schema.js');
  const rows = historyRunFromFolder(await runFolder(join(dir, 'r1'), { startedAt: '2026-12-01T02:00:00.000Z' }));
  for (let version = 1; version <= MIGRATIONS.length; version += 1) {
    // A file as roundload of that version left it: its migrations only, stamped with its version.
    const file = join(dir, `v${version}.db`);
    const old = new Database(file);
    for (const migration of MIGRATIONS.slice(0, version)) old.exec(migration);
    old.pragma(`user_version = ${version}`);
    old.pragma('application_id = 0x726c6468');
    old.close();
    const db = await openHistory(file, { create: false });
    t.after(() => db.close());
    assert.equal(appendRun(db, rows), 'added', `a v${version} file takes a run`);
    const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('figures') as string[];
    for (const column of HISTORY_FIGURE_COLUMNS) assert.ok(columns.includes(column), `v${version}: ${column}`);
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkload } from '../../src/config/index.js';
import { executeRun } from '../../src/run/index.js';
import { isKindLine, isRequestRecord, mergeRuns, readJsonlFile, resultPath } from '../../src/results/index.js';
import { SummaryBuilder, type Summary } from '../../src/analysis/index.js';
import { HistogramSet, type HistogramsFile } from '../../src/metrics/index.js';
import { NotARunError } from '../../src/errors.js';
import type { RequestRecord } from '../../src/types/index.js';
import { tempDir } from '../helpers/tmp.js';

// Tiny rotation so the shards' files come in gzipped parts and the merge reads them back.
const YAML = `name: shards
agents: {count: 5, rounds: 3, think_time_ms: 0}
results: {max_file_mb: 0.004}
engine: {decode_step_ms: 2, output_tokens_min: 8, output_tokens_max: 24}
`;

async function records(dir: string): Promise<RequestRecord[]> {
  const out: RequestRecord[] = [];
  await readJsonlFile(resultPath(dir, 'requests'), isRequestRecord, (v) => out.push(v));
  return out;
}

function histograms(dir: string): HistogramSet {
  return HistogramSet.fromFile(JSON.parse(readFileSync(resultPath(dir, 'histograms'), 'utf8')) as HistogramsFile);
}

test("merging 2 shards equals one run of both shards' requests: counts, conversations and histogram percentiles", async (t) => {
  const root = tempDir(t);
  const workload = parseWorkload(YAML, 'shards.yaml');
  const dirs = [join(root, 's0'), join(root, 's1')];
  const runs = await Promise.all(dirs.map((out, index) => executeRun({ workload, out, shard: { index, count: 2 } })));
  assert.deepEqual(
    runs.map((r) => r.status),
    ['completed', 'completed'],
  );
  assert.ok(
    readdirSync(dirs[0]!).some((f) => /^requests\.\d+\.jsonl(\.gz)?$/.test(f)),
    'the shard rotated its requests file',
  );
  const shardRecords = await Promise.all(dirs.map(records));
  // Shard 0 ran agents 0, 2, 4; shard 1 ran 1, 3: 15 requests together, no conversation in both.
  assert.deepEqual(
    shardRecords.map((rs) => [...new Set(rs.map((r) => r.agent))].sort()),
    [
      [0, 2, 4],
      [1, 3],
    ],
  );
  assert.deepEqual(
    shardRecords.map((rs) => rs.length),
    [9, 6],
  );

  const out = join(root, 'merged');
  const merged = await mergeRuns(dirs, { out });
  assert.deepEqual(merged.notes, []);
  const all = await records(out);
  assert.equal(all.length, 15);
  assert.equal(new Set(all.map((r) => r.conversation)).size, 5);
  assert.equal(merged.summary.totals.requests, 15);
  assert.equal(merged.summary.totals.ok, 15);
  for (let i = 1; i < all.length; i += 1) {
    assert.ok(all[i]!.run_ms + all[i]!.e2e_ms >= all[i - 1]!.run_ms + all[i - 1]!.e2e_ms - 1e-6, 'requests in end-time order on the common clock');
  }
  assert.equal(new Set(all.map((r) => r.connection!.id)).size, 5, 'socket ids kept apart per shard');
  assert.equal(merged.summary.connections.distinct, 5);

  // One run of both shards' requests: ttft/ttfc/tpot/reasoning/e2e from every record, ITL gaps from both shards' histograms.
  const expected = new HistogramSet();
  for (const r of shardRecords.flat()) {
    if (r.ttft_ms !== null) expected.recordMs('ttft', r.phase, r.round, r.ttft_ms);
    if (typeof r.ttfc_ms === 'number') expected.recordMs('ttfc', r.phase, r.round, r.ttfc_ms);
    if (typeof r.tpot_ms === 'number') expected.recordMs('tpot', r.phase, r.round, r.tpot_ms);
    if (typeof r.reasoning_ms === 'number') expected.recordMs('reasoning', r.phase, r.round, r.reasoning_ms);
    expected.recordMs('e2e', r.phase, r.round, r.e2e_ms);
  }
  assert.ok(expected.has('ttfc', 'main', 0) && expected.has('tpot', 'main', 0), 'the shards recorded TTFC and TPOT');
  const shardItl = new HistogramSet();
  for (const dir of dirs) shardItl.merge(histograms(dir));
  const mergedFile = histograms(out);
  for (const key of mergedFile.keys()) {
    const want = key.metric === 'itl' ? shardItl : expected;
    assert.deepEqual(mergedFile.percentiles(key.metric, key.phase, key.round), want.percentiles(key.metric, key.phase, key.round), `${key.metric} round ${key.round}`);
  }
  assert.equal(mergedFile.keys().length, expected.keys().length + shardItl.keys().filter((k) => k.metric === 'itl').length);
  const itlCount = dirs.map((d) => histograms(d).get('itl', 'main', 0).count).reduce((a, b) => a + b, 0);
  assert.equal(mergedFile.get('itl', 'main', 0).count, itlCount, 'every ITL gap of both shards, exactly once');

  const single = new SummaryBuilder({ itlFromRecords: false, windowS: workload.window_s });
  for (const r of shardRecords.flat()) single.add(r);
  for (const key of shardItl.keys()) if (key.metric === 'itl') single.histograms.get('itl', key.phase, key.round).add(shardItl.get('itl', key.phase, key.round));
  const one = single.build(merged.summary.run);
  assert.deepEqual(merged.summary.totals, one.totals);
  assert.deepEqual(
    merged.summary.phases[0]!.rounds.map((r) => [r.ttft, r.ttfc, r.tpot, r.itl, r.e2e]),
    one.phases[0]!.rounds.map((r) => [r.ttft, r.ttfc, r.tpot, r.itl, r.e2e]),
  );

  const manifest = JSON.parse(readFileSync(resultPath(out, 'manifest'), 'utf8')) as { merged_from: { shard: { index: number } }[]; shards: { count: number; merged: number }; status: string };
  assert.deepEqual(manifest.shards, { count: 2, merged: 2 });
  assert.deepEqual(
    manifest.merged_from.map((m) => m.shard.index),
    [0, 1],
  );
  assert.equal(manifest.status, 'completed');
  const summary = JSON.parse(readFileSync(resultPath(out, 'summary'), 'utf8')) as Summary;
  assert.equal(summary.totals.requests, 15);
  const events = await (async () => {
    const e: { kind: string; shard: number }[] = [];
    await readJsonlFile(resultPath(out, 'events'), isKindLine, (v) => e.push(v as { kind: string; shard: number }));
    return e;
  })();
  assert.deepEqual(
    events
      .filter((e) => e.kind === 'run_end')
      .map((e) => e.shard)
      .sort(),
    [0, 1],
  );

  // What merge refuses: the same folders again into a non-empty --out, a missing shard noted.
  await assert.rejects(mergeRuns(dirs, { out }), /not empty/);
  const partial = await mergeRuns([dirs[1]!], { out: join(root, 'partial') });
  assert.match(partial.notes.join(' '), /shards 0\/2 missing/);

  // A shard killed mid-write: its torn last line is skipped and said, the merge goes on with every whole line.
  appendFileSync(resultPath(dirs[1]!, 'requests'), '{"agent":1,"round":4,"sta');
  const torn = await mergeRuns(dirs, { out: join(root, 'torn') });
  assert.equal(torn.summary.totals.requests, 15);
  assert.match(torn.notes.join(' '), /requests\.jsonl: 1 lines of the shards did not parse or were not request records \(a killed shard's torn last line, say\) and were skipped/);
});

test('merge refuses runs of different workloads, runs without --shard, and the same shard twice', async (t) => {
  const root = tempDir(t);
  const small = 'agents: {count: 2, rounds: 1, think_time_ms: 0}\nengine: {decode_step_ms: 1, output_tokens_min: 4, output_tokens_max: 8}\n';
  const a = parseWorkload(`name: w\n${small}`, 'w.yaml');
  const b = parseWorkload(`name: w\n${small}conversation: {seed: 2}\n`, 'w.yaml');
  const [d0, d1, plain, d0again] = ['a0', 'b1', 'plain', 'a0-again'].map((n) => join(root, n));
  await executeRun({ workload: a, out: d0!, shard: { index: 0, count: 2 } });
  await executeRun({ workload: b, out: d1!, shard: { index: 1, count: 2 } });
  await executeRun({ workload: a, out: plain! });
  await executeRun({ workload: a, out: d0again!, shard: { index: 0, count: 2 } });
  await assert.rejects(mergeRuns([d0!, d1!], { out: join(root, 'm1') }), (e: unknown) => e instanceof NotARunError && /different workload.*conversation\.seed/.test(e.message));
  await assert.rejects(mergeRuns([d0!, plain!], { out: join(root, 'm2') }), /is not a shard/);
  await assert.rejects(mergeRuns([d0!, d0again!], { out: join(root, 'm3') }), /are both shard 0\/2/);
});

test('shards labelled by their machine (--label pod=…) merge: the labels all share are kept, the others are named and stay per shard', async (t) => {
  const root = tempDir(t);
  const small = 'name: w\nagents: {count: 2, rounds: 1, think_time_ms: 0}\nengine: {decode_step_ms: 1, output_tokens_min: 4, output_tokens_max: 8}\n';
  const dirs = [join(root, 's0'), join(root, 's1')];
  await Promise.all(dirs.map((out, index) => executeRun({ workload: parseWorkload(small, 'w.yaml', { labels: ['night=1', `pod=p${index}`] }), out, shard: { index, count: 2 } })));
  const merged = await mergeRuns(dirs, { out: join(root, 'merged') });
  assert.deepEqual(merged.summary.run.labels, { night: '1' });
  assert.ok(
    merged.notes.some((n) => /labels that differ between shards are left out of the merged run .*: pod/.test(n)),
    merged.notes.join('\n'),
  );
  const from = (JSON.parse(readFileSync(join(root, 'merged', 'run.json'), 'utf8')) as { merged_from: { labels: Record<string, string> }[] }).merged_from;
  assert.deepEqual(
    from.map((f) => f.labels.pod),
    ['p0', 'p1'],
  );
});
